#include "tokenizer/json_input.h"

#include "common/check.h"

namespace izwi {

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidFormat, "'{}' is not valid JSON: {}", origin, e.what());
  }
}

void throw_invalid_format(const std::string& origin, const std::string& what) {
  fail(ErrorCode::InvalidFormat, "{}: {}", origin, what);
}

std::string component_type(const nlohmann::json& component) {
  if (component.is_object()) {
    const auto it = component.find("type");
    if (it != component.end() && it->is_string()) return it->get<std::string>();
  }
  return component.dump();
}

}  // namespace izwi
