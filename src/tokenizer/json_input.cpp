#include "tokenizer/json_input.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/check.h"

namespace izwi {

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  const int depth = json_nesting_depth(text);
  if (depth > kMaxJsonDepth) {
    fail(ErrorCode::InvalidFormat, "'{}' nests JSON arrays/objects {} levels deep; at most {} are allowed", origin,
         depth, kMaxJsonDepth);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidFormat, "'{}' is not valid JSON: {}", origin, e.what());
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::NotFound, "cannot open '{}'", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
