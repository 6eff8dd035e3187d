// Attribute and item access, Python's str/dict methods, iteration, len() and `in`.
#include <algorithm>

#include "template/builtins.h"
#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {
namespace {

std::optional<std::string> optional_string(const CallArgs& args, size_t index, const char* name) {
  const Value* v = args.get(index, name);
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) throw EvalError(std::string(name) + " must be a string, not " + v->type_name());
  return v->as_string();
}

int64_t optional_int(const CallArgs& args, size_t index, const char* name, int64_t dflt) {
  const Value* v = args.get(index, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_int() && !v->is_bool()) throw EvalError(std::string(name) + " must be an integer");
  return v->as_int();
}

const std::string& string_arg(const CallArgs& args, size_t index, const char* name, const char* method) {
  const Value* v = args.get(index, name);
  if (!v) throw EvalError(std::string(method) + "() missing argument '" + name + "'");
  if (!v->is_string()) throw EvalError(std::string(method) + "() argument must be str, not " + v->type_name());
  return v->as_string();
}

Value string_list(const std::vector<std::string>& parts) {
  ValueList list;
  list.reserve(parts.size());
  for (const auto& p : parts) list.emplace_back(p);
  return Value(std::move(list));
}

// startswith/endswith: a string or a tuple of them.
bool affix(const std::string& s, const Value& arg, bool prefix) {
  const auto one = [&](const Value& v) {
    if (!v.is_string()) throw EvalError("startswith/endswith take a string or a tuple of strings");
    const std::string& a = v.as_string();
    charge_scan(a.size());
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (arg.is_list()) return std::any_of(arg.as_list().begin(), arg.as_list().end(), one);
  return one(arg);
}

bool all_chars(const std::string& s, bool (*pred)(char32_t)) {
  const std::u32string t = py::decode(s);
  return !t.empty() && std::all_of(t.begin(), t.end(), pred);
}

std::optional<Value> string_method(const std::string& s, const std::string& name, const CallArgs& a) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return Value(py::strip(s, optional_string(a, 0, "chars"), name != "rstrip", name != "lstrip"));
  }
  if (name == "split")
    return string_list(py::split(s, optional_string(a, 0, "sep"), optional_int(a, 1, "maxsplit", -1)));
  if (name == "rsplit") {
    return string_list(py::rsplit(s, optional_string(a, 0, "sep"), optional_int(a, 1, "maxsplit", -1)));
  }
  if (name == "splitlines") return string_list(py::splitlines(s));
  if (name == "startswith" || name == "endswith") {
    const Value* arg = a.get(0, "prefix");
    if (!arg) throw EvalError(name + "() takes at least 1 argument");
    return Value(affix(s, *arg, name == "startswith"));
  }
  if (name == "replace") {
    return Value(py::replace(s, string_arg(a, 0, "old", "replace"), string_arg(a, 1, "new", "replace"),
                             optional_int(a, 2, "count", -1)));
  }
  if (name == "upper") return Value(py::upper(s));
  if (name == "lower") return Value(py::lower(s));
  if (name == "title") return Value(py::title(s));
  if (name == "capitalize") return Value(py::capitalize(s));
  if (name == "find" || name == "index" || name == "rfind" || name == "rindex") {
    const std::string& sub = string_arg(a, 0, "sub", name.c_str());
    const size_t at = name[0] == 'r' ? py::rfind(s, sub) : py::find(s, sub);
    if (at == std::string::npos) {
      if (name.find("index") != std::string::npos) throw EvalError("substring not found");
      return Value(int64_t{-1});
    }
    return Value(static_cast<int64_t>(py::length(std::string_view(s).substr(0, at))));
  }
  if (name == "count") {
    const std::string& sub = string_arg(a, 0, "sub", "count");
    if (sub.empty()) return Value(static_cast<int64_t>(py::length(s) + 1));
    int64_t n = 0;
    for (size_t at = py::find(s, sub); at != std::string::npos; at = py::find(s, sub, at + sub.size())) ++n;
    return Value(n);
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    const Value* iterable = a.get(0, "iterable");
    if (!iterable) throw EvalError("join() takes exactly one argument");
    for (const Value& item : iterate(*iterable)) {
      if (!item.is_string()) throw EvalError("join(): sequence item must be str, not " + std::string(item.type_name()));
      if (!first) out += s;
      out += item.as_string();
      check_string_size(out.size());
      first = false;
    }
    return Value(std::move(out));
  }
  if (name == "isdigit") return Value(all_chars(s, [](char32_t c) { return c >= '0' && c <= '9'; }));
  if (name == "isspace") return Value(all_chars(s, py::is_space));
  if (name == "isalpha") {
    return Value(all_chars(s, [](char32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }));
  }
  if (name == "isalnum") {
    return Value(
        all_chars(s, [](char32_t c) { return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9'); }));
  }
  if (name == "islower") return Value(py::lower(s) == s && py::upper(s) != s);
  if (name == "isupper") return Value(py::upper(s) == s && py::lower(s) != s);
  return std::nullopt;
}

bool is_string_method(const std::string& name) {
  static const char* const names[] = {"strip",    "lstrip",  "rstrip",  "split",  "rsplit", "splitlines", "startswith",
                                      "endswith", "replace", "upper",   "lower",  "title",  "capitalize", "find",
                                      "index",    "rfind",   "rindex",  "count",  "join",   "isdigit",    "isspace",
                                      "isalpha",  "isalnum", "islower", "isupper"};
  return std::find_if(std::begin(names), std::end(names), [&](const char* n) { return name == n; }) != std::end(names);
}

std::optional<Value> dict_method(const Value& self, const std::string& name, const CallArgs& a) {
  const ValueDict& d = self.as_dict();
  if (name == "items") {
    ValueList out;
    for (const auto& [k, v] : d.entries) out.push_back(Value::tuple({k, v}));
    return Value(std::move(out));
  }
  if (name == "keys") {
    ValueList out;
    for (const auto& e : d.entries) out.emplace_back(e.first);
    return Value(std::move(out));
  }
  if (name == "values") {
    ValueList out;
    for (const auto& e : d.entries) out.push_back(e.second);
    return Value(std::move(out));
  }
  if (name == "get") {
    const Value* key = a.get(0, "key");
    if (!key) throw EvalError("get() takes at least 1 argument");
    const Value* hit = d.find(*key);
    if (hit) return *hit;
    const Value* dflt = a.get(1, "default");
    return dflt ? *dflt : Value::none();
  }
  return std::nullopt;
}

Value bind(const Value& self, const std::string& name) {
  return Value::method(self, [self, name](const CallArgs& args) -> Value {
    if (self.is_string()) charge_scan(self.as_string().size());  // str methods read all of it
    std::optional<Value> result =
        self.is_string() ? string_method(self.as_string(), name, args) : dict_method(self, name, args);
    if (!result) throw EvalError("'" + std::string(self.type_name()) + "' object has no attribute '" + name + "'");
    return *result;
  });
}

Value missing_attribute(const Value& obj, const std::string& what) {
  return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute " + what);
}

}  // namespace

Value get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_string() && is_string_method(name)) return bind(obj, name);
  if (obj.is_dict()) {
    if (name == "items" || name == "keys" || name == "values" || name == "get") return bind(obj, name);
    if (const Value* v = obj.as_dict().find(Value(name))) return *v;
    return missing_attribute(obj, "'" + name + "'");
  }
  if (obj.is_namespace()) {
    if (const Value* v = obj.as_dict().find(Value(name))) return *v;
  }
  return missing_attribute(obj, "'" + name + "'");
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_dict() || obj.is_namespace()) {
    if (const Value* v = obj.as_dict().find(key)) return *v;
    return missing_attribute(obj, key.repr());
  }
  if (obj.is_generator()) throw EvalError("'generator' object is not subscriptable");
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_list()) {
      const int64_t n = static_cast<int64_t>(obj.as_list().size());
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        return Value::undefined(obj.type_name() + std::string(" object has no element ") + key.repr());
      return obj.as_list()[static_cast<size_t>(i)];
    }
    charge_scan(obj.as_string().size());
    const int64_t n = static_cast<int64_t>(py::code_points(obj.as_string()));
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined("str object has no element " + key.repr());
    return Value(py::encode(std::u32string(1, py::code_point_at(obj.as_string(), static_cast<size_t>(i)))));
  }
  if (key.is_string()) return get_attr(obj, key.as_string());
  return missing_attribute(obj, key.repr());
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined:
      return {};
    case Value::Kind::List:  // a copy for the moment: its steps, but no bytes that stay
      charge_steps(static_cast<int64_t>(value.as_list().size()));
      return value.as_list();
    case Value::Kind::Dict: {
      charge_steps(static_cast<int64_t>(value.as_dict().entries.size()));
      ValueList keys;
      for (const auto& e : value.as_dict().entries) keys.emplace_back(e.first);
      return keys;
    }
    case Value::Kind::String: {
      check_items(py::length(value.as_string()));
      ValueList chars;
      for (const char32_t c : py::decode(value.as_string())) chars.emplace_back(py::encode(std::u32string(1, c)));
      return chars;
    }
    default:
      throw EvalError("'" + std::string(value.type_name()) + "' object is not iterable");
  }
}

int64_t length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined:
      return 0;
    case Value::Kind::String:
      charge_scan(value.as_string().size());
      return static_cast<int64_t>(py::length(value.as_string()));
    case Value::Kind::List:
      if (value.is_generator()) throw EvalError("object of type 'generator' has no len()");
      return static_cast<int64_t>(value.as_list().size());
    case Value::Kind::Dict:
      return static_cast<int64_t>(value.as_dict().entries.size());
    default:
      throw EvalError("object of type '" + std::string(value.type_name()) + "' has no len()");
  }
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::String:
      if (!item.is_string()) {
        throw EvalError("'in <string>' requires string as left operand, not " + std::string(item.type_name()));
      }
      charge_scan(container.as_string().size());
      return py::find(container.as_string(), item.as_string()) != std::string::npos;
    case Value::Kind::List:
      return std::any_of(container.as_list().begin(), container.as_list().end(),
                         [&](const Value& v) { return equals(v, item); });
    case Value::Kind::Dict:
      return container.as_dict().find(item) != nullptr;
    case Value::Kind::Undefined:
      return false;
    default:
      throw EvalError("argument of type '" + std::string(container.type_name()) + "' is not iterable");
  }
}

}  // namespace izwi::jinja
