// Jinja's builtin tests (`x is defined`, `x is string`, ...).
#include <map>

#include "template/builtins.h"
#include "template/int_math.h"
#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {
namespace {

using TestFn = bool (*)(const Value&, const CallArgs&);

const Value& arg0(const CallArgs& a, const char* test) {
  const Value* v = a.get(0, "value");
  if (!v) throw EvalError(std::string("test '") + test + "' needs an argument");
  return *v;
}

const std::map<std::string, TestFn>& tests() {
  static const std::map<std::string, TestFn> table = {
      {"defined", [](const Value& v, const CallArgs&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const CallArgs&) { return v.is_undefined(); }},
      {"none", [](const Value& v, const CallArgs&) { return v.is_none(); }},
      {"boolean", [](const Value& v, const CallArgs&) { return v.is_bool(); }},
      {"true", [](const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }},
      {"integer", [](const Value& v, const CallArgs&) { return v.is_int(); }},
      {"float", [](const Value& v, const CallArgs&) { return v.is_float(); }},
      {"number", [](const Value& v, const CallArgs&) { return v.is_number(); }},
      {"string", [](const Value& v, const CallArgs&) { return v.is_string(); }},
      {"mapping", [](const Value& v, const CallArgs&) { return v.is_dict(); }},
      {"sequence", [](const Value& v, const CallArgs&) { return v.is_list() || v.is_string() || v.is_dict(); }},
      {"iterable",
       [](const Value& v, const CallArgs&) { return v.is_list() || v.is_string() || v.is_dict() || v.is_undefined(); }},
      {"callable", [](const Value& v, const CallArgs&) { return v.is_function(); }},
      {"odd", [](const Value& v, const CallArgs&) { return v.as_int() % 2 != 0; }},
      {"even", [](const Value& v, const CallArgs&) { return v.as_int() % 2 == 0; }},
      {"divisibleby",
       [](const Value& v, const CallArgs& a) {
         const int64_t d = arg0(a, "divisibleby").as_int();
         if (d == 0) throw EvalError("integer division or modulo by zero");
         return py::mod(v.as_int(), d) == 0;
       }},
      {"lower",
       [](const Value& v, const CallArgs&) { return v.is_string() && py::lower(v.as_string()) == v.as_string(); }},
      {"upper",
       [](const Value& v, const CallArgs&) { return v.is_string() && py::upper(v.as_string()) == v.as_string(); }},
      {"eq", [](const Value& v, const CallArgs& a) { return equals(v, arg0(a, "eq")); }},
      {"equalto", [](const Value& v, const CallArgs& a) { return equals(v, arg0(a, "equalto")); }},
      {"==", [](const Value& v, const CallArgs& a) { return equals(v, arg0(a, "==")); }},
      {"ne", [](const Value& v, const CallArgs& a) { return !equals(v, arg0(a, "ne")); }},
      {"!=", [](const Value& v, const CallArgs& a) { return !equals(v, arg0(a, "!=")); }},
      {"lt", [](const Value& v, const CallArgs& a) { return less(v, arg0(a, "lt")); }},
      {"lessthan", [](const Value& v, const CallArgs& a) { return less(v, arg0(a, "lessthan")); }},
      {"<", [](const Value& v, const CallArgs& a) { return less(v, arg0(a, "<")); }},
      {"gt", [](const Value& v, const CallArgs& a) { return less(arg0(a, "gt"), v); }},
      {"greaterthan", [](const Value& v, const CallArgs& a) { return less(arg0(a, "greaterthan"), v); }},
      {">", [](const Value& v, const CallArgs& a) { return less(arg0(a, ">"), v); }},
      {"le", [](const Value& v, const CallArgs& a) { return !less(arg0(a, "le"), v); }},
      {"<=", [](const Value& v, const CallArgs& a) { return !less(arg0(a, "<="), v); }},
      {"ge", [](const Value& v, const CallArgs& a) { return !less(v, arg0(a, "ge")); }},
      {">=", [](const Value& v, const CallArgs& a) { return !less(v, arg0(a, ">=")); }},
      {"in", [](const Value& v, const CallArgs& a) { return contains(arg0(a, "in"), v); }},
      {"sameas",
       [](const Value& v, const CallArgs& a) {
         const Value& o = arg0(a, "sameas");
         if (v.kind() != o.kind()) return false;
         if (v.is_none() || v.is_undefined()) return true;
         if (v.is_bool()) return v.as_bool() == o.as_bool();
         return equals(v, o) && (v.is_number() || v.is_string());
       }},
  };
  return table;
}

}  // namespace

bool has_test(const std::string& name) { return tests().count(name) != 0; }

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
  const auto it = tests().find(name);
  if (it == tests().end()) throw EvalError("no test named '" + name + "'");
  if (value.is_string()) charge_scan(value.as_string().size());  // lower/upper read all of it
  return it->second(value, args);
}

}  // namespace izwi::jinja
