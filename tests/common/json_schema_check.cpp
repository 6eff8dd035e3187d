#include "common/json_schema_check.h"

#include <cmath>
#include <regex>

namespace izwi::testing {

namespace {

using nlohmann::json;

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool days_valid(int year, int month, int day) {
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > days[month - 1]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

bool format_valid(const std::string& format, const std::string& s) {
  static const std::regex date(R"(^(\d{4})-(\d{2})-(\d{2})$)");
  static const std::regex time(R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([zZ]|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  static const std::regex uuid(R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
  static const std::regex email(
      R"(^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]*[a-z0-9])?$)",
      std::regex::icase);
  std::smatch m;
  if (format == "date") {
    return std::regex_match(s, m, date) && days_valid(std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]));
  }
  if (format == "time") return std::regex_match(s, time);
  if (format == "date-time") {
    const size_t t = s.find_first_of("Tt");
    return t != std::string::npos && format_valid("date", s.substr(0, t)) && format_valid("time", s.substr(t + 1));
  }
  if (format == "uuid") return std::regex_match(s, uuid);
  if (format == "email") return std::regex_match(s, email);
  return true;  // unknown formats are annotations
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  std::string check(const json& v, const json& s, const std::string& at) const {
    if (s.is_boolean()) return s.get<bool>() ? "" : at + ": schema false";
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"].get<std::string>();
      return check(v, root_.at(json::json_pointer(ref.substr(1))), at);
    }
    if (s.contains("type")) {
      const json types = s["type"].is_array() ? s["type"] : json::array({s["type"]});
      bool any = false;
      for (const json& t : types) any = any || is_type(v, t.get<std::string>());
      if (!any) return at + ": not of type " + s["type"].dump();
    }
    if (s.contains("enum")) {
      bool found = false;
      for (const json& e : s["enum"]) found = found || e == v;
      if (!found) return at + ": not in enum";
    }
    if (s.contains("const") && s["const"] != v) return at + ": not the const";
    if (s.contains("anyOf")) {
      bool any = false;
      for (const json& branch : s["anyOf"]) any = any || check(v, branch, at).empty();
      if (!any) return at + ": matches no anyOf branch";
    }
    if (s.contains("oneOf")) {
      int matches = 0;
      for (const json& branch : s["oneOf"]) matches += check(v, branch, at).empty();
      if (matches != 1) return at + ": matches " + std::to_string(matches) + " oneOf branches";
    }
    if (v.is_object()) {
      const json props = s.value("properties", json::object());
      for (const json& name : s.value("required", json::array())) {
        if (!v.contains(name.get<std::string>())) return at + ": missing required " + name.dump();
      }
      for (const auto& [key, item] : v.items()) {
        if (props.contains(key)) {
          std::string e = check(item, props[key], at + "/" + key);
          if (!e.empty()) return e;
        } else if (s.contains("additionalProperties")) {
          std::string e = check(item, s["additionalProperties"], at + "/" + key);
          if (!e.empty()) return at + ": additional property " + key + ": " + e;
        }
      }
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return at + ": below minItems";
      if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return at + ": above maxItems";
      const json prefix = s.value("prefixItems", json::array());
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string here = at + "/" + std::to_string(i);
        std::string e;
        if (i < prefix.size()) {
          e = check(v[i], prefix[i], here);
        } else if (s.contains("items")) {
          e = check(v[i], s["items"], here);
        }
        if (!e.empty()) return e;
      }
    }
    if (v.is_string()) {
      const std::string str = v.get<std::string>();
      if (s.contains("minLength") && code_points(str) < s["minLength"].get<size_t>()) return at + ": below minLength";
      if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<size_t>()) return at + ": above maxLength";
      if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>()))) {
        return at + ": does not match pattern " + s["pattern"].dump();
      }
      if (s.contains("format") && !format_valid(s["format"].get<std::string>(), str)) {
        return at + ": not a valid " + s["format"].dump();
      }
    }
    if (v.is_number()) {
      const double x = v.get<double>();
      if (s.contains("minimum") && x < s["minimum"].get<double>()) return at + ": below minimum";
      if (s.contains("maximum") && x > s["maximum"].get<double>()) return at + ": above maximum";
    }
    return "";
  }

 private:
  static bool is_type(const json& v, const std::string& t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "number") return v.is_number();
    if (t == "integer") {
      return v.is_number_integer() ||
             (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
    }
    return false;
  }

  const json& root_;
};

}  // namespace

std::string json_schema_violation(const nlohmann::json& value, const nlohmann::json& schema) {
  return Validator(schema).check(value, schema, "");
}

}  // namespace izwi::testing
