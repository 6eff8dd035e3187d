#include "template/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {

const Value* ValueDict::find(const Value& key) const {
  charge_steps(static_cast<int64_t>(entries.size()));
  for (const auto& [k, v] : entries) {
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

Value* ValueDict::find(const Value& key) {
  charge_steps(static_cast<int64_t>(entries.size()));
  for (auto& [k, v] : entries) {
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

void ValueDict::set(const Value& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
  } else {
    entries.emplace_back(key, std::move(value));
  }
}

const Value* CallArgs::get(size_t index, const char* name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value Value::undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.s_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value::Value(bool b) : kind_(Kind::Bool), b_(b) {}
Value::Value(int64_t i) : kind_(Kind::Int), i_(i) {}
Value::Value(double f) : kind_(Kind::Float), f_(f) {}
const std::string Value::kNoText;

Value::Value(std::string s) : kind_(Kind::String) {
  charge_bytes(s.size());
  s_ = std::make_shared<const std::string>(std::move(s));
}

Value::Value(ValueList list) : kind_(Kind::List) {
  charge_items(list.size());
  int deepest = 0;
  for (const Value& item : list) deepest = std::max(deepest, item.depth_);
  depth_ = nested_depth(deepest);
  list_ = std::make_shared<ValueList>(std::move(list));
}

Value::Value(ValueDict dict) : kind_(Kind::Dict) {
  charge_items(dict.entries.size());
  set_dict(std::move(dict));
}

Value Value::loop_context(ValueDict attrs) {
  Value v;
  v.kind_ = Kind::Dict;
  v.set_dict(std::move(attrs));
  return v;
}

void Value::set_dict(ValueDict dict) {
  int deepest = 0;
  for (const auto& [k, v] : dict.entries) deepest = std::max({deepest, k.depth_, v.depth_});
  depth_ = nested_depth(deepest);
  dict_ = std::make_shared<ValueDict>(std::move(dict));
}

Value Value::tuple(ValueList items) {
  Value v(std::move(items));
  v.tuple_ = true;
  return v;
}

Value Value::markup(std::string s) {
  Value v(std::move(s));
  v.markup_ = true;
  return v;
}

Value Value::generator(ValueList items) {
  Value v(std::move(items));
  v.generator_ = true;
  return v;
}

Value Value::make_namespace(ValueDict dict) {
  Value v(std::move(dict));
  v.kind_ = Kind::Namespace;
  v.depth_ = 1;
  return v;
}

Value Value::function(Function f) {
  Value v;
  v.kind_ = Kind::Function;
  v.fn_ = std::make_shared<Function>(std::move(f));
  return v;
}

Value Value::method(const Value& self, Function f) {
  Value v = function(std::move(f));
  v.depth_ = nested_depth(self.depth_);
  return v;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::Float:
      return f_;
    case Kind::Int:
      return static_cast<double>(i_);
    case Kind::Bool:
      return b_ ? 1.0 : 0.0;
    default:
      throw EvalError(std::string("a number was expected, not ") + type_name());
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return b_;
    case Kind::Int:
      return i_ != 0;
    case Kind::Float:
      return f_ != 0.0;
    case Kind::String:
      return !as_string().empty();
    case Kind::List:
      return generator_ || !list_->empty();
    case Kind::Dict:
      return !dict_->entries.empty();
    case Kind::Namespace:
    case Kind::Function:
      return true;
  }
  return false;
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |x| < 1e16.
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, result.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + mantissa + exp_buf;
}

namespace {

std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const unsigned char c : s) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

namespace {

// The lists and dicts being printed on this thread: one met again is a cycle (through a namespace,
// the only mutable value), printed as Python prints a recursive list or dict.
thread_local std::vector<const void*> printing;

// Prints `container` with `print` unless it is already being printed (then `cycle`).
template <typename Print>
std::string guarded(const void* container, const char* cycle, Print&& print) {
  if (std::find(printing.begin(), printing.end(), container) != printing.end()) return cycle;
  const ValueWalk walk;  // through namespaces, nesting is not bounded by depth(): count it here
  printing.push_back(container);
  struct Pop {
    ~Pop() { printing.pop_back(); }
  } pop;
  std::string out = print();
  charge_bytes(out.size());
  return out;
}

std::string repr_dict(const ValueDict& dict) {
  return guarded(&dict, "{...}", [&] {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : dict.entries) {
      charge_steps(1);  // a value whose items share children has many more paths than items
      out += (first ? "" : ", ") + k.repr() + ": " + v.repr();
      check_string_size(out.size());
      first = false;
    }
    return out + "}";
  });
}

}  // namespace

std::string Value::repr() const {
  switch (kind_) {
    case Kind::String:
      return repr_string(as_string());
    case Kind::List:
      if (generator_) return "<generator object>";
      return guarded(list_.get(), "[...]", [&] {
        std::string out = tuple_ ? "(" : "[";
        for (size_t i = 0; i < list_->size(); ++i) {
          charge_steps(1);
          out += (i ? ", " : "") + (*list_)[i].repr();
          check_string_size(out.size());
        }
        if (tuple_ && list_->size() == 1) out += ",";
        return out + (tuple_ ? ")" : "]");
      });
    case Kind::Dict:
      return repr_dict(*dict_);
    default:
      return str();
  }
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::Undefined:
      return "";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return b_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(i_);
    case Kind::Float:
      return float_repr(f_);
    case Kind::String:
      return as_string();
    case Kind::List:
    case Kind::Dict:
      return repr();
    case Kind::Namespace:  // Jinja's repr: its attribute dict's
      return "<Namespace " + repr_dict(*dict_) + ">";
    case Kind::Function:
      return "<function>";
  }
  return "";
}

const char* Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return generator_ ? "generator" : tuple_ ? "tuple" : "list";
    case Kind::Dict:
      return "dict";
    case Kind::Namespace:
      return "Namespace";
    case Kind::Function:
      return "function";
  }
  return "?";
}

bool equals(const Value& a, const Value& b) {
  charge_steps(1);  // values that share children compare along every path
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
      return true;
    case Value::Kind::String: {
      const std::string &x = a.as_string(), &y = b.as_string();
      if (&x == &y) return true;  // one shared text
      if (x.size() != y.size()) return false;
      charge_scan(x.size());
      return x == y;
    }
    case Value::Kind::List: {
      if (&a.as_list() == &b.as_list()) return true;
      if (a.is_generator() || b.is_generator()) return false;
      const ValueList &x = a.as_list(), &y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::Dict: {
      const ValueDict &x = a.as_dict(), &y = b.as_dict();
      if (&x == &y) return true;
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.find(k);
        if (!other || !equals(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Function:
      return &a.as_function() == &b.as_function();
    default:  // a namespace is equal only to itself
      return &a.as_dict() == &b.as_dict();
  }
}

bool less(const Value& a, const Value& b) {
  charge_steps(1);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) {
    const std::string &x = a.as_string(), &y = b.as_string();
    if (&x == &y) return false;  // one shared text
    charge_scan(std::min(x.size(), y.size()));
    return x < y;  // UTF-8 order = code point order
  }
  if (a.is_list() && b.is_list()) {
    const ValueList &x = a.as_list(), &y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  throw EvalError(std::string("'<' not supported between instances of '") + a.type_name() + "' and '" + b.type_name() +
                  "'");
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
    check_string_size(out.size());  // escaping grows a text up to 5 times
  }
  return out;
}

void undefined_error(const Value& value) {
  throw EvalError(value.undefined_hint().empty() ? "an undefined value was used" : value.undefined_hint());
}

}  // namespace izwi::jinja
