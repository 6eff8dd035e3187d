#include "common/json_fields.h"

#include "common/regular_file.h"

namespace izwi {

void check_json_depth(std::string_view text, const std::string& origin) {
  size_t depth = 0;
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
      if (++depth > kMaxJsonDepth) {
        fail(ErrorCode::InvalidFormat, "'{}': JSON nesting depth exceeds {} levels (at byte {})", origin, kMaxJsonDepth,
             i);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;  // unbalanced brackets are the parser's to report
    }
  }
}

nlohmann::json parse_json(std::string_view text, const std::string& origin) {
  check_json_depth(text, origin);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // syntax errors and out-of-range numbers
    fail(ErrorCode::InvalidFormat, "'{}' is not valid JSON: {}", origin, e.what());
  }
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json(read_regular_file(path, "JSON file", kMaxJsonFileBytes), path);
}

const char* json_type_name(const nlohmann::json& value) { return value.type_name(); }

JsonFields::JsonFields(const nlohmann::json& object, std::string origin)
    : object_(&object), origin_(std::move(origin)) {
  if (!object.is_object())
    fail(ErrorCode::InvalidFormat, "{}: expected a JSON object, found {}", origin_, object.type_name());
}

bool JsonFields::has(const std::string& key) const { return find(key) != nullptr; }

const nlohmann::json* JsonFields::find(const std::string& key) const {
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<JsonFields> JsonFields::object(const std::string& key) const {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_object()) {
    fail(ErrorCode::InvalidFormat, "{}: field '{}' has type {}, expected an object", origin_, key, value->type_name());
  }
  return JsonFields(*value, origin_ + "." + key);
}

}  // namespace izwi
