#include "template/json_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {
namespace {

Value from_json(const nlohmann::ordered_json& json, int depth) {
  if (json.is_structured()) nested_depth(depth);
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList list;
      list.reserve(json.size());
      for (const auto& item : json) list.push_back(from_json(item, depth + 1));
      return Value(std::move(list));
    }
    case nlohmann::ordered_json::value_t::object: {
      ValueDict dict;  // a JSON object's keys are distinct: no lookups while building
      dict.entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) dict.entries.emplace_back(Value(key), from_json(item, depth + 1));
      return Value(std::move(dict));
    }
    default:
      return Value::none();
  }
}

void dump_string(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  const auto hex4 = [&](unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
  };
  if (ensure_ascii) {
    for (const char32_t c : py::decode(s)) {
      if (c >= 0x80) {
        if (c >= 0x10000) {
          const unsigned v = static_cast<unsigned>(c) - 0x10000;
          hex4(0xD800 + (v >> 10));
          hex4(0xDC00 + (v & 0x3FF));
        } else {
          hex4(static_cast<unsigned>(c));
        }
        continue;
      }
      std::string one;
      dump_string(std::string(1, static_cast<char>(c)), false, one);
      out += one.substr(1, one.size() - 2);
      check_string_size(out.size());  // escaping grows a text up to 6 times
    }
    out += '"';
    return;
  }
  for (const unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          hex4(c);
        } else {
          out += static_cast<char>(c);
        }
    }
    check_string_size(out.size());
  }
  out += '"';
}

// json.dumps turns keys into strings: 1 -> "1", True -> "true", None -> "null".
std::string key_text(const Value& key) {
  if (key.is_string()) return key.as_string();
  if (key.is_bool()) return key.as_bool() ? "true" : "false";
  if (key.is_none()) return "null";
  if (key.is_int() || key.is_float()) return key.str();
  throw EvalError(std::string("keys must be str, int, float, bool or None, not ") + key.type_name());
}

void dump(const Value& v, const JsonDumpOptions& o, int depth, std::string& out) {
  const std::string item_sep = o.item_separator.value_or(o.indent ? "," : ", ");
  const std::string key_sep = o.key_separator.value_or(": ");
  const auto newline = [&](int level) {
    if (!o.indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) {
      out += *o.indent;
      check_string_size(out.size());
    }
  };
  charge_steps(1);  // values that share children are dumped along every path
  check_string_size(out.size());
  switch (v.kind()) {
    case Value::Kind::None:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::Float: {
      const double d = v.as_double();
      if (std::isnan(d)) {
        out += "NaN";
      } else if (std::isinf(d)) {
        out += d < 0 ? "-Infinity" : "Infinity";
      } else {
        out += float_repr(d);
      }
      return;
    }
    case Value::Kind::String:
      dump_string(v.as_string(), o.ensure_ascii, out);
      return;
    case Value::Kind::List: {
      if (v.is_generator()) throw EvalError("Object of type generator is not JSON serializable");
      const ValueList& list = v.as_list();
      if (list.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        dump(list[i], o, depth + 1, out);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::Dict: {
      std::vector<const std::pair<Value, Value>*> entries;
      for (const auto& e : v.as_dict().entries) entries.push_back(&e);
      if (entries.empty()) {
        out += "{}";
        return;
      }
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return less(a->first, b->first); });
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        dump_string(key_text(entries[i]->first), o.ensure_ascii, out);
        out += key_sep;
        dump(entries[i]->second, o, depth + 1, out);
      }
      newline(depth);
      out += '}';
      return;
    }
    default:
      throw EvalError(std::string("Object of type ") + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  dump(value, options, 0, out);
  return out;
}

Value from_json(const nlohmann::ordered_json& json) { return from_json(json, 0); }

}  // namespace izwi::jinja
