#include "tokenizer/json_input.h"

#include <algorithm>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/regular_file.h"

namespace izwi {

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) { return parse_json(text, origin); }

std::string read_text_file(const std::string& path) { return read_regular_file(path, "file", kMaxJsonFileBytes); }

nlohmann::json read_json(const std::string& path) { return parse_json_text(read_text_file(path), path); }

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
