#include "common/json_fields.h"

#include "common/regular_file.h"

namespace izwi {

nlohmann::json read_json_file(const std::string& path) {
  // Checked to be a regular file first: a FIFO would block the read forever.
  const std::string text = read_regular_file(path, "JSON file", kMaxJsonFileBytes);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax errors and out-of-range numbers
    fail(ErrorCode::InvalidFormat, "'{}' is not valid JSON: {}", path, e.what());
  }
}

const char* json_type_name(const nlohmann::json& value) { return value.type_name(); }

JsonFields::JsonFields(const nlohmann::json& object, std::string origin)
    : object_(&object), origin_(std::move(origin)) {
  if (!object.is_object()) fail(ErrorCode::InvalidFormat, "{}: expected a JSON object, found {}", origin_, object.type_name());
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
