#pragma once
// The values a chat template computes with: Python's none/bool/int/float/str/list/dict as Jinja
// sees them, plus Undefined (a missing variable or attribute), callables (macros, builtins and
// bound methods) and namespace objects. Lists, dicts and namespaces are shared by reference, as in
// Python.

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace izwi::jinja {

/// An error of the template's own making (a type error, an undefined value used, a bad argument):
/// the interpreter adds the template name and line.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Value;
using ValueList = std::vector<Value>;

/// A dict in insertion order (Python 3.7+); keys are strings, numbers, booleans or none.
struct ValueDict {
  std::vector<std::pair<Value, Value>> entries;
  const Value* find(const Value& key) const;  ///< Python's hash equality: 1, 1.0 and True are one key
  Value* find(const Value& key);
  void set(const Value& key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  /// The positional argument `index`, else the keyword `name`, else nullptr.
  const Value* get(size_t index, const char* name) const;
};
using Function = std::function<Value(const CallArgs&)>;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Function };

  Value() = default;  // Undefined
  static Value undefined(std::string hint = {});
  static Value none();
  Value(bool b);
  Value(int64_t i);
  Value(int i) : Value(static_cast<int64_t>(i)) {}
  Value(double f);
  // Building a string, list or dict draws from the render's budget and throws a limit error past
  // the limits of template/limits.h (too long, too many items, nested too deeply).
  Value(std::string s);
  Value(const char* s) : Value(std::string(s)) {}
  Value(ValueList list);
  Value(ValueDict dict);
  /// A string marked safe (Jinja's Markup, from |safe or |escape): `+` and `~` escape the other side.
  static Value markup(std::string s);
  static Value tuple(ValueList items);
  /// What select/map/reverse/items return in Jinja: iterable, always true, without len() or JSON.
  static Value generator(ValueList items);
  static Value make_namespace(ValueDict dict);
  /// Jinja's `loop` object, one per iteration: of a fixed size and dropped by the next, it costs the
  /// render steps (the loop charges them) but no bytes that accumulate.
  static Value loop_context(ValueDict attrs);
  static Value function(Function f);
  /// A function bound to `self` (a str or dict method): it holds `self`, so it nests as deep.
  static Value method(const Value& self, Function f);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_markup() const { return kind_ == Kind::String && markup_; }
  bool is_tuple() const { return kind_ == Kind::List && tuple_; }
  bool is_generator() const { return kind_ == Kind::List && generator_; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_namespace() const { return kind_ == Kind::Namespace; }
  bool is_function() const { return kind_ == Kind::Function; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::Bool ? (b_ ? 1 : 0) : i_; }
  double as_double() const;  ///< of a number
  const std::string& as_string() const { return s_ ? *s_ : kNoText; }
  const ValueList& as_list() const { return *list_; }
  ValueList& as_list() { return *list_; }
  const ValueDict& as_dict() const { return *dict_; }  ///< also a namespace's attributes
  ValueDict& as_dict() { return *dict_; }
  const Function& as_function() const { return *fn_; }
  /// Why a value is undefined ("'x' is undefined"), for the error its use raises.
  const std::string& undefined_hint() const { return as_string(); }

  /// Python's truth value.
  bool truthy() const;
  /// Python's str(): what {{ value }} prints ("" for Undefined).
  std::string str() const;
  /// Python's repr(), as str() of a list or dict shows its items.
  std::string repr() const;
  /// A type name for error messages ("str", "dict", ...).
  const char* type_name() const;
  /// Levels of lists and dicts: 0 for a scalar, 1 for a list of scalars. A namespace counts 1
  /// whatever it holds (it is mutable; walks through it count their own depth).
  int depth() const { return depth_; }

 private:
  void set_dict(ValueDict dict);  ///< with its depth

  Kind kind_ = Kind::Undefined;
  bool b_ = false;
  bool tuple_ = false;
  bool generator_ = false;
  bool markup_ = false;
  int depth_ = 0;
  int64_t i_ = 0;
  double f_ = 0;
  std::shared_ptr<const std::string> s_;  // shared: copying a value does not copy its text
  static const std::string kNoText;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<Function> fn_;
};

/// Python's ==: numbers by value (1 == 1.0 == True), lists and dicts by content (a list or dict
/// equals itself, as Python's identity shortcut has it).
bool equals(const Value& a, const Value& b);
/// Python's <, for numbers, strings and lists; EvalError for other types.
bool less(const Value& a, const Value& b);
/// Python's repr() of a float ("1.0", "0.1", "1e-05", "1e+16").
std::string float_repr(double value);
/// markupsafe.escape: & < > " ' as HTML entities.
std::string html_escape(const std::string& s);
/// Throws EvalError naming why `value` is undefined.
[[noreturn]] void undefined_error(const Value& value);

}  // namespace izwi::jinja
