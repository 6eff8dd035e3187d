#include "server/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "server/api_error.h"

namespace izwi::server {

namespace {

const nlohmann::json* field(const nlohmann::json& body, const std::string& name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

nlohmann::json parse_body(const std::string& body) {
  // Stopped at the first value too deep, before a deep structure is built.
  const nlohmann::json::parser_callback_t limit_depth = [](int depth, nlohmann::json::parse_event_t event,
                                                           nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw ApiError(400, fmt::format("the request body nests arrays and objects deeper than {} levels", kMaxJsonDepth),
                     {}, "invalid_json");
    }
    return true;
  };
  nlohmann::json json = nlohmann::json::parse(body, limit_depth, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw ApiError(400, "the request body is not valid JSON", {}, "invalid_json");
  if (!json.is_object()) throw ApiError(400, "the request body must be a JSON object", {}, "invalid_json");
  return json;
}

std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string> string_field(const nlohmann::json& body, const std::string& name) {
  const nlohmann::json* value = field(body, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) bad_param(name, "'{}' must be a string", name);
  return value->get<std::string>();
}

std::optional<bool> bool_field(const nlohmann::json& body, const std::string& name) {
  const nlohmann::json* value = field(body, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) bad_param(name, "'{}' must be a boolean", name);
  return value->get<bool>();
}

std::optional<double> number_field(const nlohmann::json& body, const std::string& name, double min, double max) {
  const nlohmann::json* value = field(body, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) bad_param(name, "'{}' must be a number", name);
  const double number = value->get<double>();
  if (!(number >= min && number <= max)) bad_param(name, "'{}' = {} must be in [{}, {}]", name, number, min, max);
  return number;
}

std::optional<int64_t> integer_field(const nlohmann::json& body, const std::string& name, int64_t min, int64_t max) {
  const nlohmann::json* value = field(body, name);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_float()) {
    const double number = value->get<double>();
    if (!(number >= static_cast<double>(min) && number <= static_cast<double>(max))) {
      bad_param(name, "'{}' = {} must be in [{}, {}]", name, number, min, max);
    }
    if (number != std::floor(number)) bad_param(name, "'{}' must be an integer", name);
    return static_cast<int64_t>(number);
  }
  if (!value->is_number_integer()) bad_param(name, "'{}' must be an integer", name);
  // Unsigned values above INT64_MAX do not fit get<int64_t>().
  if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(max)) {
    bad_param(name, "'{}' = {} must be in [{}, {}]", name, value->get<uint64_t>(), min, max);
  }
  const int64_t number = value->get<int64_t>();
  if (number < min || number > max) bad_param(name, "'{}' = {} must be in [{}, {}]", name, number, min, max);
  return number;
}

std::string required_string(const nlohmann::json& body, const std::string& name) {
  std::optional<std::string> value = string_field(body, name);
  if (!value) bad_param(name, "'{}' is required", name);
  return *value;
}

std::vector<std::string> string_or_strings(const nlohmann::json& body, const std::string& name, size_t max_items) {
  const nlohmann::json* value = field(body, name);
  if (value == nullptr) return {};
  if (value->is_string()) return {value->get<std::string>()};
  if (!value->is_array()) bad_param(name, "'{}' must be a string or an array of strings", name);
  if (value->size() > max_items) bad_param(name, "'{}' holds {} strings; at most {}", name, value->size(), max_items);
  std::vector<std::string> out;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) bad_param(name, "'{}' must be a string or an array of strings", name);
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace izwi::server
