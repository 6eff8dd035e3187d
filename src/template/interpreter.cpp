#include "template/interpreter.h"

#include <cmath>
#include <ctime>
#include <map>
#include <memory>

#include "template/builtins.h"
#include "template/int_math.h"
#include "template/lexer.h"
#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {
namespace {

/// raise_exception(): the message is the template's own.
class RaisedError : public EvalError {
 public:
  using EvalError::EvalError;
};

// A scope, shared by the scopes under it and by what runs in it. A macro or caller refers to the
// scope it was defined in weakly: a strong reference from a value in the scope to the scope would be
// a cycle, and keeping every such scope alive (a macro defined in a loop) pinned gigabytes.
struct Frame;
using FramePtr = std::shared_ptr<Frame>;
struct Frame {
  std::map<std::string, Value> vars;
  FramePtr parent;

  const Value* lookup(const std::string& name) const {
    for (const Frame* f = this; f; f = f->parent.get()) {
      const auto it = f->vars.find(name);
      if (it != f->vars.end()) return &it->second;
    }
    return nullptr;
  }
};

FramePtr scope(const FramePtr& parent) {
  auto f = std::make_shared<Frame>();
  f->parent = parent;
  return f;
}

enum class Flow { Normal, Break, Continue };

class Interpreter {
 public:
  explicit Interpreter(const ValueDict& context) : root_(std::make_shared<Frame>()) {
    for (const auto& [k, v] : context.entries) root_->vars[k.str()] = v;
  }

  // Namespaces may hold themselves (ns.self = ns) or chain without bound: emptying each (while all
  // are still held) frees such values without a leak and without recursion.
  ~Interpreter() {
    for (Value& ns : namespaces_) ns.as_dict().entries.clear();
  }

  std::string run(const Template& t) {
    const RenderBudget budget;
    std::string out;
    exec_body(t.body, root_, out);
    return out;
  }

 private:
  [[noreturn]] static void located(int line, const EvalError& e) {
    throw RenderError{line, e.what(), dynamic_cast<const RaisedError*>(&e) != nullptr};
  }

  // Counts one level of the evaluator's recursion (expressions, blocks and macro calls alike).
  struct Nested {
    explicit Nested(Interpreter& in) : depth(in.depth_) {
      if (depth >= kMaxEvalDepth) {
        limit_exceeded("expressions, blocks and macro calls nest too deeply", kMaxEvalDepth);
      }
      ++depth;
    }
    ~Nested() { --depth; }
    int& depth;
  };

  static void emit(std::string& out, const std::string& text) {
    string_size_sum(out.size(), text.size());
    charge_bytes(text.size());
    out += text;
  }

  Flow exec_body(const Body& body, const FramePtr& frame, std::string& out) {
    for (const StmtPtr& s : body) {
      Flow flow;
      try {
        flow = exec(*s, frame, out);
      } catch (const EvalError& e) {  // not located by an expression: the statement's line
        located(s->line, e);
      }
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  // Errors are EvalErrors: exec_body names the statement's line.
  void assign(const Target& target, const Value& value, Frame& frame) {
    if (!target.attribute.empty()) {
      const Value* ns = frame.lookup(target.names[0]);
      if (!ns || !ns->is_namespace()) {
        throw EvalError("can only assign attributes of a namespace ('" + target.names[0] + "' is not one)");
      }
      const_cast<Value*>(ns)->as_dict().set(Value(target.attribute), value);
      return;
    }
    if (target.names.size() == 1) {
      frame.vars[target.names[0]] = value;
      return;
    }
    const ValueList items = iterate(value);
    if (items.size() != target.names.size()) {
      throw EvalError("cannot unpack " + std::to_string(items.size()) + " values into " +
                      std::to_string(target.names.size()) + " names");
    }
    for (size_t i = 0; i < items.size(); ++i) frame.vars[target.names[i]] = items[i];
  }

  Flow exec(const Stmt& s, const FramePtr& frame, std::string& out) {
    const Nested nested(*this);
    charge_steps(1);
    switch (s.kind) {
      case Stmt::Kind::Text:
        emit(out, s.text);
        return Flow::Normal;
      case Stmt::Kind::Output:
        emit(out, eval(*s.expr, frame).str());
        return Flow::Normal;
      case Stmt::Kind::If:
        for (const auto& [cond, body] : s.branches) {
          if (eval(*cond, frame).truthy()) return exec_body(body, frame, out);
        }
        return exec_body(s.else_body, frame, out);
      case Stmt::Kind::For:
        return exec_for(s, frame, out);
      case Stmt::Kind::Set:
        assign(s.target, eval(*s.expr, frame), *frame);
        return Flow::Normal;
      case Stmt::Kind::SetBlock: {
        std::string captured;
        exec_body(s.body, scope(frame), captured);
        Value v(captured);
        if (s.filter) v = apply_filter_chain(*s.filter, v, frame);
        assign(s.target, v, *frame);
        return Flow::Normal;
      }
      case Stmt::Kind::Macro:
        frame->vars[s.text] = make_macro(s, frame);
        return Flow::Normal;
      case Stmt::Kind::CallBlock: {
        const std::weak_ptr<Frame> defining = frame;
        const Stmt* block = &s;
        Value caller = Value::function([this, block, defining](const CallArgs& args) -> Value {
          return call_body(*block, "caller", defining, args);
        });
        emit(out, eval_call(*s.expr, frame, &caller).str());
        return Flow::Normal;
      }
      case Stmt::Kind::FilterBlock: {
        std::string captured;
        exec_body(s.body, scope(frame), captured);
        emit(out, apply_filter_chain(*s.filter, Value(captured), frame).str());
        return Flow::Normal;
      }
      case Stmt::Kind::Break:
        return Flow::Break;
      case Stmt::Kind::Continue:
        return Flow::Continue;
      case Stmt::Kind::Scope:
        return exec_body(s.body, frame, out);
    }
    return Flow::Normal;
  }

  Flow exec_for(const Stmt& s, const FramePtr& frame, std::string& out) {
    const Value iterable = eval(*s.expr, frame);
    ValueList items;
    try {
      items = iterate(iterable);
    } catch (const EvalError& e) {
      located(s.expr->line, e);
    }
    if (s.filter) {  // the `if` clause filters before loop.index/length are counted
      ValueList kept;
      for (const Value& item : items) {
        const FramePtr probe = scope(frame);
        assign(s.target, item, *probe);
        if (eval(*s.filter, probe).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec_body(s.else_body, frame, out);
      return Flow::Normal;
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      charge_steps(1);
      const FramePtr inner = scope(frame);
      ValueDict loop;  // distinct keys: no lookups while building
      const auto add = [&loop](const char* key, Value v) { loop.entries.emplace_back(Value(key), std::move(v)); };
      add("index", Value(i + 1));
      add("index0", Value(i));
      add("revindex", Value(n - i));
      add("revindex0", Value(n - i - 1));
      add("first", Value(i == 0));
      add("last", Value(i == n - 1));
      add("length", Value(n));
      add("depth", Value(int64_t{1}));
      add("depth0", Value(int64_t{0}));
      add("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
      add("nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
      add("cycle", Value::function([i](const CallArgs& args) -> Value {
            if (args.positional.empty()) throw EvalError("no items for cycling given");
            return args.positional[static_cast<size_t>(i) % args.positional.size()];
          }));
      inner->vars["loop"] = Value::loop_context(std::move(loop));
      assign(s.target, items[i], *inner);
      if (exec_body(s.body, inner, out) == Flow::Break) break;
    }
    return Flow::Normal;
  }

  void bind_params(const std::vector<std::pair<std::string, ExprPtr>>& params, const CallArgs& args,
                   const FramePtr& inner, const std::string& name) {
    if (args.positional.size() > params.size()) {
      throw EvalError("macro '" + name + "' takes not more than " + std::to_string(params.size()) + " argument(s)");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string& p = params[i].first;
      if (i < args.positional.size()) {
        inner->vars[p] = args.positional[i];
        continue;
      }
      bool found = false;
      for (const auto& [k, v] : args.keyword) {
        if (k == p) {
          inner->vars[p] = v;
          found = true;
        }
      }
      if (!found) {
        inner->vars[p] = params[i].second ? eval(*params[i].second, inner)
                                          : Value::undefined("parameter '" + p + "' was not provided");
      }
    }
    for (const auto& [k, v] : args.keyword) {
      bool known = k == "caller";
      for (const auto& p : params) known = known || p.first == k;
      if (!known) throw EvalError("macro '" + name + "' takes no keyword argument '" + k + "'");
      if (k == "caller") inner->vars["caller"] = v;
    }
  }

  // A macro's or caller's body, called with `args`, in a scope under the one it was defined in. Called
  // after that scope ended (stored in a namespace, called after its loop), it fails: Jinja2 itself
  // no longer sees that scope's variables then.
  Value call_body(const Stmt& block, const std::string& name, const std::weak_ptr<Frame>& defining,
                  const CallArgs& args) {
    if (calls_ >= kMaxCallDepth) {
      limit_exceeded("macro calls nest too deeply", kMaxCallDepth);
    }
    ++calls_;
    charge_steps(kStepsPerCall);
    struct Exit {
      int& calls;
      ~Exit() { --calls; }
    } exit{calls_};
    FramePtr parent = defining.lock();
    if (!parent) throw EvalError("'" + name + "' was called after the block that defined it ended");
    const FramePtr inner = scope(parent);
    bind_params(block.params, args, inner, name);
    std::string text;
    exec_body(block.body, inner, text);
    return Value(text);
  }

  Value make_macro(const Stmt& s, const FramePtr& frame) {
    const Stmt* macro = &s;
    const std::weak_ptr<Frame> defining = frame;
    return Value::function([this, macro, defining](const CallArgs& args) -> Value {
      return call_body(*macro, macro->text, defining, args);
    });
  }

  Value apply_filter_chain(const Expr& e, const Value& input, const FramePtr& frame) {
    // e is a Filter whose innermost object is null: apply inner filters first.
    const Value v = e.object ? apply_filter_chain(*e.object, input, frame) : input;
    CallArgs args = eval_args(e, frame);
    try {
      return apply_filter(e.name, v, args);
    } catch (const EvalError& err) {
      located(e.line, err);
    }
  }

  CallArgs eval_args(const Expr& e, const FramePtr& frame) {
    CallArgs args;
    for (const ExprPtr& item : e.items) args.positional.push_back(eval(*item, frame));
    for (const auto& [k, v] : e.keywords) args.keyword.emplace_back(k, eval(*v, frame));
    return args;
  }

  Value eval_call(const Expr& e, const FramePtr& frame, const Value* caller) {
    const Value callee = eval(*e.object, frame);
    CallArgs args = eval_args(e, frame);
    if (caller) args.keyword.emplace_back("caller", *caller);
    try {
      if (callee.is_undefined()) undefined_error(callee);
      if (!callee.is_function()) throw EvalError("'" + std::string(callee.type_name()) + "' object is not callable");
      return callee.as_function()(args);
    } catch (const EvalError& err) {
      located(e.line, err);
    }
  }

  Value eval(const Expr& e, const FramePtr& frame) {
    try {
      const Nested nested(*this);
      charge_steps(1);
      return eval_inner(e, frame);
    } catch (const EvalError& err) {
      located(e.line, err);
    }
  }

  Value lookup(const std::string& name, const FramePtr& frame) {
    if (const Value* v = frame->lookup(name)) return *v;
    if (name == "range") return Value::function(builtin_range);
    if (name == "namespace") {
      return Value::function([this](const CallArgs& args) { return builtin_namespace(args); });
    }
    if (name == "dict") return Value::function(builtin_dict);
    if (name == "raise_exception") {
      return Value::function([](const CallArgs& args) -> Value {
        throw RaisedError(args.positional.empty() ? std::string() : args.positional[0].str());
      });
    }
    if (name == "strftime_now") return Value::function(builtin_strftime_now);
    return Value::undefined("'" + name + "' is undefined");
  }

  static Value builtin_range(const CallArgs& args) {
    int64_t start = 0, stop = 0, step = 1;
    const auto& p = args.positional;
    if (p.size() == 1) {
      stop = p[0].as_int();
    } else if (p.size() == 2 || p.size() == 3) {
      start = p[0].as_int();
      stop = p[1].as_int();
      if (p.size() == 3) step = p[2].as_int();
    } else {
      throw EvalError("range expected 1 to 3 arguments");
    }
    if (step == 0) throw EvalError("range() arg 3 must not be zero");
    // Python's len(range(...)), in 128 bits: the bounds may be anywhere in int64.
    const __int128 span = step > 0 ? __int128{stop} - start : __int128{start} - stop;
    const __int128 magnitude = step > 0 ? __int128{step} : -__int128{step};
    const __int128 count = span <= 0 ? 0 : (span + magnitude - 1) / magnitude;
    if (count > kMaxRangeItems) {
      limit_exceeded("range() has too many items", kMaxRangeItems);
    }
    ValueList out;
    out.reserve(static_cast<size_t>(count));
    for (__int128 k = 0; k < count; ++k) out.emplace_back(static_cast<int64_t>(start + k * step));
    return Value(std::move(out));
  }

  // Each namespace is registered: the destructor breaks the cycles they may form.
  Value builtin_namespace(const CallArgs& args) {
    ValueDict attrs;
    for (const Value& p : args.positional) {
      if (!p.is_dict()) throw EvalError("namespace() takes a mapping");
      for (const auto& [k, v] : p.as_dict().entries) attrs.set(k, v);
    }
    for (const auto& [k, v] : args.keyword) attrs.set(Value(k), v);
    namespaces_.push_back(Value::make_namespace(std::move(attrs)));
    return namespaces_.back();
  }

  static Value builtin_dict(const CallArgs& args) {
    ValueDict d;
    for (const Value& p : args.positional) {
      if (!p.is_dict()) throw EvalError("dict() takes a mapping");
      for (const auto& [k, v] : p.as_dict().entries) d.set(k, v);
    }
    for (const auto& [k, v] : args.keyword) d.set(Value(k), v);
    return Value(std::move(d));
  }

  static Value builtin_strftime_now(const CallArgs& args) {
    if (args.positional.empty() || !args.positional[0].is_string()) {
      throw EvalError("strftime_now() takes a format string");
    }
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[512];
    const size_t n = std::strftime(buf, sizeof buf, args.positional[0].as_string().c_str(), &local);
    return Value(std::string(buf, n));
  }

  static std::optional<int64_t> slice_part(const Value& v) {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) throw EvalError("slice indices must be integers or None");
    return v.as_int();
  }

  Value eval_inner(const Expr& e, const FramePtr& frame) {
    switch (e.kind) {
      case Expr::Kind::Literal:
        return e.value;
      case Expr::Kind::Name:
        return lookup(e.name, frame);
      case Expr::Kind::List: {
        ValueList items;
        for (const ExprPtr& item : e.items) items.push_back(eval(*item, frame));
        return e.is_tuple ? Value::tuple(std::move(items)) : Value(std::move(items));
      }
      case Expr::Kind::Dict: {
        ValueDict d;
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          const Value key = eval(*e.items[i], frame);
          if (key.is_list() && !key.is_tuple()) throw EvalError("unhashable type: 'list'");
          if (key.is_dict() || key.is_undefined() || key.is_function()) {
            throw EvalError("unhashable type: '" + std::string(key.type_name()) + "'");
          }
          d.set(key, eval(*e.items[i + 1], frame));
        }
        return Value(std::move(d));
      }
      case Expr::Kind::GetAttr:
        return get_attr(eval(*e.object, frame), e.name);
      case Expr::Kind::GetItem:
        return get_item(eval(*e.object, frame), eval(*e.items[0], frame));
      case Expr::Kind::Slice: {
        const Value obj = eval(*e.object, frame);
        std::optional<int64_t> parts[3];
        for (int i = 0; i < 3; ++i) {
          if (e.items[i]) parts[i] = slice_part(eval(*e.items[i], frame));
        }
        if (obj.is_undefined()) undefined_error(obj);
        if (obj.is_string()) {
          charge_scan(obj.as_string().size());
          const std::u32string text = py::decode(obj.as_string());
          std::u32string out;
          const py::SliceRange r = py::slice_indices(static_cast<int64_t>(text.size()), parts[0], parts[1], parts[2]);
          for (int64_t k = 0; k < r.count; ++k) out += text[static_cast<size_t>(r[k])];
          return Value(py::encode(out));
        }
        if (obj.is_list() && !obj.is_generator()) {
          ValueList out;
          const ValueList& list = obj.as_list();
          const py::SliceRange r = py::slice_indices(static_cast<int64_t>(list.size()), parts[0], parts[1], parts[2]);
          for (int64_t k = 0; k < r.count; ++k) out.push_back(list[static_cast<size_t>(r[k])]);
          return obj.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
        }
        throw EvalError("'" + std::string(obj.type_name()) + "' object is not subscriptable");
      }
      case Expr::Kind::Call:
        return eval_call(e, frame, nullptr);
      case Expr::Kind::Filter: {
        const Value v = e.object ? eval(*e.object, frame) : Value();
        return apply_filter(e.name, v, eval_args(e, frame));
      }
      case Expr::Kind::Test: {
        const Value v = eval(*e.object, frame);
        const bool result = apply_test(e.name, v, eval_args(e, frame));
        return Value(result != e.negated);
      }
      case Expr::Kind::Unary: {
        const Value v = eval(*e.object, frame);
        if (e.name == "not") return Value(!v.truthy());
        if (v.is_undefined()) undefined_error(v);
        if (!v.is_number()) throw EvalError("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
        if (e.name == "-") return v.is_float() ? Value(-v.as_double()) : Value(py::neg(v.as_int()));
        return v.is_float() ? v : Value(v.as_int());
      }
      case Expr::Kind::Binary:
        return eval_binary(e, frame);
      case Expr::Kind::Conditional:
        if (eval(*e.object, frame).truthy()) return eval(*e.items[0], frame);
        if (e.items[1]) return eval(*e.items[1], frame);
        return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
    }
    return Value();
  }

  Value eval_binary(const Expr& e, const FramePtr& frame) {
    const std::string& op = e.name;
    if (op == "and") {
      Value l = eval(*e.object, frame);
      return l.truthy() ? eval(*e.other, frame) : l;
    }
    if (op == "or") {
      Value l = eval(*e.object, frame);
      return l.truthy() ? l : eval(*e.other, frame);
    }
    const Value l = eval(*e.object, frame);
    const Value r = eval(*e.other, frame);
    if (op == "==") return Value(equals(l, r));
    if (op == "!=") return Value(!equals(l, r));
    if (op == "in") return Value(contains(r, l));
    if (op == "not in") return Value(!contains(r, l));
    if (op == "~") {
      if (l.is_markup() || r.is_markup()) return Value::markup(concat(markup_text(l), markup_text(r)));
      return Value(concat(l.str(), r.str()));
    }
    if (l.is_undefined()) undefined_error(l);
    if (r.is_undefined()) undefined_error(r);
    if (op == "<") return Value(less(l, r));
    if (op == ">") return Value(less(r, l));
    if (op == "<=") return Value(!less(r, l));
    if (op == ">=") return Value(!less(l, r));
    return arithmetic(op, l, r);
  }

  // a + b, a limit error when too long (checked before building it).
  static std::string concat(const std::string& a, const std::string& b) {
    std::string out;
    out.reserve(string_size_sum(a.size(), b.size()));
    return out.append(a).append(b);
  }

  // A Markup operand stays as is; anything else is escaped (markupsafe).
  static std::string markup_text(const Value& v) { return v.is_markup() ? v.as_string() : html_escape(v.str()); }

  static Value arithmetic(const std::string& op, const Value& l, const Value& r) {
    const auto unsupported = [&]() -> EvalError {
      return EvalError("unsupported operand type(s) for " + op + ": '" + l.type_name() + "' and '" + r.type_name() +
                       "'");
    };
    if (op == "+") {
      if (l.is_string() && r.is_string()) {
        if (l.is_markup() || r.is_markup()) return Value::markup(concat(markup_text(l), markup_text(r)));
        return Value(concat(l.as_string(), r.as_string()));
      }
      if (l.is_list() && r.is_list() && !l.is_generator() && !r.is_generator()) {
        check_items(l.as_list().size() + r.as_list().size());
        ValueList out = l.as_list();
        out.insert(out.end(), r.as_list().begin(), r.as_list().end());
        return Value(std::move(out));
      }
    }
    if (op == "*" &&
        ((l.is_string() && (r.is_int() || r.is_bool())) || (r.is_string() && (l.is_int() || l.is_bool())))) {
      const std::string& s = l.is_string() ? l.as_string() : r.as_string();
      const int64_t n = l.is_string() ? r.as_int() : l.as_int();
      if (n <= 0 || s.empty()) return Value(std::string());
      std::string out;
      out.reserve(string_size_product(s.size(), static_cast<uint64_t>(n)));
      for (int64_t i = 0; i < n; ++i) out += s;
      return Value(std::move(out));
    }
    if (!l.is_number() || !r.is_number()) throw unsupported();
    const bool floats = l.is_float() || r.is_float();
    if (op == "/") {
      if (r.as_double() == 0) throw EvalError("division by zero");
      return Value(l.as_double() / r.as_double());
    }
    if (op == "**") {
      if (!floats && r.as_int() >= 0) return Value(py::pow(l.as_int(), r.as_int()));
      if (l.as_double() == 0 && r.as_double() < 0) throw EvalError("0.0 cannot be raised to a negative power");
      return Value(std::pow(l.as_double(), r.as_double()));
    }
    if (floats) {
      const double a = l.as_double(), b = r.as_double();
      if (op == "+") return Value(a + b);
      if (op == "-") return Value(a - b);
      if (op == "*") return Value(a * b);
      if (b == 0) throw EvalError("float division by zero");
      if (op == "//") return Value(std::floor(a / b));
      if (op == "%") {
        double m = std::fmod(a, b);
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        return Value(m);
      }
      throw unsupported();
    }
    const int64_t a = l.as_int(), b = r.as_int();
    if (op == "+") return Value(py::add(a, b));
    if (op == "-") return Value(py::sub(a, b));
    if (op == "*") return Value(py::mul(a, b));
    if (op != "//" && op != "%") throw unsupported();
    if (b == 0) throw EvalError("integer division or modulo by zero");
    return Value(op == "//" ? py::floor_div(a, b) : py::mod(a, b));
  }

  FramePtr root_;
  std::vector<Value> namespaces_;  // every namespace() made
  int depth_ = 0;                  // of the evaluator's recursion
  int calls_ = 0;                  // of macro and caller calls
};

void check_expr(const Expr* e) {
  if (!e) return;
  if (e->kind == Expr::Kind::Filter && !has_filter(e->name)) {
    throw SyntaxError{e->line, "no filter named '" + e->name + "'"};
  }
  if (e->kind == Expr::Kind::Test && !has_test(e->name)) throw SyntaxError{e->line, "no test named '" + e->name + "'"};
  check_expr(e->object.get());
  check_expr(e->other.get());
  for (const auto& item : e->items) check_expr(item.get());
  for (const auto& kw : e->keywords) check_expr(kw.second.get());
}

void check_body(const Body& body) {
  for (const StmtPtr& s : body) {
    check_expr(s->expr.get());
    check_expr(s->filter.get());
    for (const auto& [cond, b] : s->branches) {
      check_expr(cond.get());
      check_body(b);
    }
    for (const auto& p : s->params) check_expr(p.second.get());
    check_body(s->body);
    check_body(s->else_body);
  }
}

}  // namespace

void check_names(const Template& tmpl) { check_body(tmpl.body); }

std::string render(const Template& tmpl, const ValueDict& context) { return Interpreter(context).run(tmpl); }

}  // namespace izwi::jinja
