#include "template/parser.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>

#include "template/lexer.h"
#include "template/limits.h"

namespace izwi::jinja {
namespace {

using TK = Token::Kind;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Template run() {
    Template t;
    t.body = subparse({});
    if (peek().kind != TK::End) fail("unexpected tag");
    return t;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const std::string& message) const { throw SyntaxError{peek().line, message}; }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == TK::Operator && peek(ahead).text == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).kind == TK::Name && peek(ahead).text == name;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', got " + describe(peek()));
  }
  std::string expect_name() {
    if (peek().kind != TK::Name) fail("expected a name, got " + describe(peek()));
    return next().text;
  }
  void expect_block_end() {
    if (peek().kind != TK::BlockEnd) fail("expected the end of the statement block, got " + describe(peek()));
    next();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TK::End:
        return "end of template";
      case TK::BlockEnd:
        return "end of statement block";
      case TK::VariableEnd:
        return "end of print statement";
      case TK::String:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }

  // Statements until a {% name %} in `ends` (left unconsumed: the caller reads the block tag's name)
  // or the end of the template.
  Body subparse(std::initializer_list<const char*> ends) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == TK::End) {
        if (ends.size() != 0) {
          std::string names;
          for (const char* e : ends) names += std::string(names.empty() ? "" : " or ") + "'" + e + "'";
          throw SyntaxError{t.line, "unexpected end of template, expected " + names};
        }
        return body;
      }
      if (t.kind == TK::Text) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::Text, t.line);
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.kind == TK::VariableBegin) {
        next();
        auto s = std::make_unique<Stmt>(Stmt::Kind::Output, t.line);
        s->expr = parse_tuple(true, {});
        if (peek().kind != TK::VariableEnd) fail("expected the end of the print statement, got " + describe(peek()));
        next();
        body.push_back(std::move(s));
      } else if (t.kind == TK::BlockBegin) {
        if (peek(1).kind == TK::Name) {
          for (const char* e : ends) {
            if (peek(1).text == e) {
              next();  // the caller consumes the name
              return body;
            }
          }
        }
        next();
        body.push_back(statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  void end_tag(const char* name) {
    if (!skip_name(name)) fail(std::string("expected '") + name + "'");
    expect_block_end();
  }

  // Counts one level of the parser's recursion (blocks or sub-expressions, each its own count):
  // nesting is bounded before it recurses, so a 100,000-deep `not not ...` is an error, not a crash.
  struct Nested {
    Nested(Parser& p, int& depth, const char* what) : depth(depth) {
      if (depth >= kMaxParseNesting) {
        p.fail(std::string(what) + " nested too deeply (limit " + std::to_string(kMaxParseNesting) + ")");
      }
      ++depth;
    }
    ~Nested() { --depth; }
    int& depth;
  };

  StmtPtr statement() {
    const Nested nested(*this, block_depth_, "blocks");
    const Token& t = peek();
    if (t.kind != TK::Name) fail("tag name expected");
    const std::string name = t.text;
    const int line = t.line;
    next();
    if (name == "if") return if_statement(line);
    if (name == "for") return for_statement(line);
    if (name == "set") return set_statement(line);
    if (name == "macro") return macro_statement(line);
    if (name == "call") return call_statement(line);
    if (name == "filter") return filter_statement(line);
    if (name == "break" || name == "continue") {
      expect_block_end();
      return std::make_unique<Stmt>(name == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, line);
    }
    if (name == "generation") {  // transformers' AssistantTracker: marks assistant text, renders it as is
      expect_block_end();
      auto s = std::make_unique<Stmt>(Stmt::Kind::Scope, line);
      s->body = subparse({"endgeneration"});
      end_tag("endgeneration");
      return s;
    }
    throw SyntaxError{line, "encountered unknown tag '" + name + "'"};
  }

  StmtPtr if_statement(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::If, line);
    ExprPtr cond = parse_tuple(false, {});
    expect_block_end();
    while (true) {
      Body body = subparse({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(cond), std::move(body));
      const std::string tag = next().text;
      if (tag == "elif") {
        cond = parse_tuple(false, {});
        expect_block_end();
        continue;
      }
      if (tag == "else") {
        expect_block_end();
        s->else_body = subparse({"endif"});
        end_tag("endif");
      } else {
        expect_block_end();
      }
      return s;
    }
  }

  Target assign_target(bool allow_attribute, std::initializer_list<const char*> extra_ends) {
    Target target;
    if (allow_attribute && peek().kind == TK::Name && is_op(".", 1)) {
      target.names.push_back(next().text);
      next();
      target.attribute = expect_name();
      return target;
    }
    const bool paren = skip_op("(");
    while (true) {
      target.names.push_back(expect_name());
      if (!skip_op(",")) break;
      bool end = peek().kind == TK::BlockEnd || is_op("=") || is_op(")");
      for (const char* e : extra_ends) end = end || is_name(e);
      if (end) break;
    }
    if (paren) expect_op(")");
    return target;
  }

  StmtPtr for_statement(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::For, line);
    s->target = assign_target(false, {"in"});
    if (!skip_name("in")) fail("expected 'in'");
    s->expr = parse_tuple(false, {"recursive"});
    if (skip_name("if")) s->filter = parse_expression(true);
    if (skip_name("recursive")) s->recursive = true;
    expect_block_end();
    s->body = subparse({"endfor", "else"});
    if (next().text == "else") {
      expect_block_end();
      s->else_body = subparse({"endfor"});
      end_tag("endfor");
    } else {
      expect_block_end();
    }
    return s;
  }

  StmtPtr set_statement(int line) {
    Target target = assign_target(true, {});
    if (skip_op("=")) {
      auto s = std::make_unique<Stmt>(Stmt::Kind::Set, line);
      s->target = std::move(target);
      s->expr = parse_tuple(true, {});
      expect_block_end();
      return s;
    }
    auto s = std::make_unique<Stmt>(Stmt::Kind::SetBlock, line);
    s->target = std::move(target);
    if (is_op("|")) s->filter = filter_chain(nullptr);
    expect_block_end();
    s->body = subparse({"endset"});
    end_tag("endset");
    return s;
  }

  void signature(std::vector<std::pair<std::string, ExprPtr>>& params) {
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      if (is_op(")")) break;
      std::string name = expect_name();
      ExprPtr dflt;
      if (skip_op("=")) dflt = parse_expression(true);
      params.emplace_back(std::move(name), std::move(dflt));
    }
    next();
  }

  StmtPtr macro_statement(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::Macro, line);
    s->text = expect_name();
    signature(s->params);
    expect_block_end();
    s->body = subparse({"endmacro"});
    end_tag("endmacro");
    return s;
  }

  StmtPtr call_statement(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::CallBlock, line);
    if (is_op("(")) signature(s->params);
    s->expr = parse_expression(true);
    if (s->expr->kind != Expr::Kind::Call) throw SyntaxError{line, "expected a call after {% call %}"};
    expect_block_end();
    s->body = subparse({"endcall"});
    end_tag("endcall");
    return s;
  }

  StmtPtr filter_statement(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::FilterBlock, line);
    s->filter = filter_chain(nullptr, /*leading_pipe=*/false);
    expect_block_end();
    s->body = subparse({"endfilter"});
    end_tag("endfilter");
    return s;
  }

  // ---- expressions ----

  ExprPtr make(Expr::Kind kind, int line) { return std::make_unique<Expr>(kind, line); }

  // Sets e's height from its children; a chain like a+a+...+a or x|f|f|... must stay shallow.
  ExprPtr checked(ExprPtr e) {
    int h = 0;
    const auto see = [&](const ExprPtr& c) {
      if (c) h = std::max(h, c->height);
    };
    see(e->object);
    see(e->other);
    for (const auto& c : e->items) see(c);
    for (const auto& k : e->keywords) see(k.second);
    e->height = h + 1;
    if (e->height > kMaxExpressionHeight) {
      throw SyntaxError{e->line, "expression too deep (limit " + std::to_string(kMaxExpressionHeight) + " levels)"};
    }
    return e;
  }

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<const char*> extra_ends, bool explicit_parens = false) {
    const int line = peek().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      bool end = peek().kind == TK::VariableEnd || peek().kind == TK::BlockEnd || is_op(")");
      for (const char* e : extra_ends) end = end || is_name(e);
      if (end) break;
      items.push_back(parse_expression(with_condexpr));
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) fail("expected an expression, got " + describe(peek()));
    }
    auto e = make(Expr::Kind::List, line);
    e->items = std::move(items);
    e->is_tuple = true;
    return checked(std::move(e));
  }

  ExprPtr parse_expression(bool with_condexpr) {
    if (!with_condexpr) return parse_or();
    ExprPtr expr = parse_or();
    while (is_name("if")) {
      const int line = next().line;
      auto e = make(Expr::Kind::Conditional, line);
      e->object = parse_or();  // the condition
      e->items.push_back(std::move(expr));
      if (skip_name("else")) {
        const Nested nested(*this, depth_, "expressions");
        e->items.push_back(parse_expression(true));
      } else {
        e->items.push_back(nullptr);
      }
      expr = checked(std::move(e));
    }
    return expr;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    auto e = make(Expr::Kind::Binary, line);
    e->name = std::move(op);
    e->object = std::move(left);
    e->other = std::move(right);
    return checked(std::move(e));
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      left = binary("or", std::move(left), parse_and(), line);
    }
    return left;
  }
  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      left = binary("and", std::move(left), parse_not(), line);
    }
    return left;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      const Nested nested(*this, depth_, "expressions");
      const int line = next().line;
      auto e = make(Expr::Kind::Unary, line);
      e->name = "not";
      e->object = parse_not();
      return checked(std::move(e));
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr left = parse_math1();
    // A chain a < b < c is (a < b) and (b < c); chat templates do not chain, so pairs suffice.
    while (true) {
      const int line = peek().line;
      std::string op;
      for (const char* o : {"==", "!=", "<", ">", "<=", ">="}) {
        if (is_op(o)) op = o;
      }
      if (!op.empty()) {
        next();
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        return left;
      }
      left = binary(op, std::move(left), parse_math1(), line);
    }
  }
  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      left = binary(t.text, std::move(left), parse_concat(), t.line);
    }
    return left;
  }
  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      left = binary("~", std::move(left), parse_math2(), line);
    }
    return left;
  }
  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      left = binary(t.text, std::move(left), parse_pow(), t.line);
    }
    return left;
  }
  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const int line = next().line;
      left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }
  ExprPtr parse_unary(bool with_filter) {
    const Nested nested(*this, depth_, "expressions");
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      node = make(Expr::Kind::Unary, t.line);
      node->name = t.text;
      node->object = parse_unary(false);
      node = checked(std::move(node));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    const int line = t.line;
    if (t.kind == TK::Name) {
      next();
      if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
        auto e = make(Expr::Kind::Literal, line);
        e->value = Value(t.text == "true" || t.text == "True");
        return e;
      }
      if (t.text == "none" || t.text == "None") {
        auto e = make(Expr::Kind::Literal, line);
        e->value = Value::none();
        return e;
      }
      auto e = make(Expr::Kind::Name, line);
      e->name = t.text;
      return e;
    }
    if (t.kind == TK::String) {
      std::string s;
      while (peek().kind == TK::String) s += next().text;  // adjacent literals concatenate
      auto e = make(Expr::Kind::Literal, line);
      e->value = Value(std::move(s));
      return e;
    }
    if (t.kind == TK::Int || t.kind == TK::Float) {
      next();
      auto e = make(Expr::Kind::Literal, line);
      e->value = t.kind == TK::Int ? Value(int_literal(t)) : Value(float_literal(t));
      return e;
    }
    if (skip_op("(")) {
      ExprPtr e = parse_tuple(true, {}, true);
      expect_op(")");
      return e;
    }
    if (skip_op("[")) {
      auto e = make(Expr::Kind::List, line);
      while (!is_op("]")) {
        if (!e->items.empty()) expect_op(",");
        if (is_op("]")) break;
        e->items.push_back(parse_expression(true));
      }
      next();
      return checked(std::move(e));
    }
    if (skip_op("{")) {
      auto e = make(Expr::Kind::Dict, line);
      while (!is_op("}")) {
        if (!e->items.empty()) expect_op(",");
        if (is_op("}")) break;
        e->items.push_back(parse_expression(true));
        expect_op(":");
        e->items.push_back(parse_expression(true));
      }
      next();
      return checked(std::move(e));
    }
    fail("unexpected " + describe(t));
  }

  static int64_t int_literal(const Token& t) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
    if (error != std::errc() || end != t.text.data() + t.text.size()) {
      throw SyntaxError{t.line, "integer literal does not fit in 64 bits: " + t.text};
    }
    return value;
  }

  static double float_literal(const Token& t) {
    try {
      return std::stod(t.text);
    } catch (const std::exception&) {  // out of range (1e999): Python makes it inf, 1e-999 0.0
      throw SyntaxError{t.line, "float literal out of range: " + t.text};
    }
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = filter_chain(std::move(node));
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const Token& t = next();
    if (t.text == ".") {
      const Token& attr = peek();
      if (attr.kind == TK::Name) {
        next();
        auto e = make(Expr::Kind::GetAttr, t.line);
        e->object = std::move(node);
        e->name = attr.text;
        return checked(std::move(e));
      }
      if (attr.kind == TK::Int) {
        next();
        auto e = make(Expr::Kind::GetItem, t.line);
        e->object = std::move(node);
        auto index = make(Expr::Kind::Literal, t.line);
        index->value = Value(int_literal(attr));
        e->items.push_back(std::move(index));
        return checked(std::move(e));
      }
      fail("expected a name or number after '.'");
    }
    // '[': an index or a slice
    ExprPtr parts[3];
    bool slice = false;
    int part = 0;
    while (!is_op("]")) {
      if (is_op(":")) {
        next();
        slice = true;
        if (++part > 2) fail("a slice has at most three parts");
        continue;
      }
      if (parts[part]) fail("expected ':' or ']'");
      parts[part] = parse_expression(true);
      if (is_op(",")) fail("tuple subscripts are not supported");
    }
    next();
    if (!slice) {
      if (!parts[0]) fail("expected an index");
      auto e = make(Expr::Kind::GetItem, t.line);
      e->object = std::move(node);
      e->items.push_back(std::move(parts[0]));
      return checked(std::move(e));
    }
    auto e = make(Expr::Kind::Slice, t.line);
    e->object = std::move(node);
    for (auto& p : parts) e->items.push_back(std::move(p));
    return checked(std::move(e));
  }

  void call_args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (!e.items.empty() || !e.keywords.empty()) expect_op(",");
      if (is_op(")")) break;
      if (peek().kind == TK::Name && is_op("=", 1)) {
        std::string key = next().text;
        next();
        e.keywords.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e.keywords.empty()) fail("a positional argument follows a keyword argument");
        e.items.push_back(parse_expression(true));
      }
    }
    next();
  }

  ExprPtr parse_call(ExprPtr node) {
    auto e = make(Expr::Kind::Call, peek().line);
    e->object = std::move(node);
    call_args(*e);
    return checked(std::move(e));
  }

  // `| name(args) | name ...` applied to node (null: the body of {% filter %} / {% set %}).
  ExprPtr filter_chain(ExprPtr node, bool leading_pipe = true) {
    bool first = true;
    while ((first && !leading_pipe) || is_op("|")) {
      if (!(first && !leading_pipe)) next();
      first = false;
      const int line = peek().line;
      std::string name = expect_name();
      while (skip_op(".")) name += "." + expect_name();
      auto e = make(Expr::Kind::Filter, line);
      e->name = std::move(name);
      e->object = std::move(node);
      if (is_op("(")) call_args(*e);
      node = checked(std::move(e));
    }
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    const int line = next().line;  // 'is'
    auto e = make(Expr::Kind::Test, line);
    e->negated = skip_name("not");
    e->name = expect_name();
    while (skip_op(".")) e->name += "." + expect_name();
    e->object = std::move(node);
    const Token& t = peek();
    if (is_op("(")) {
      call_args(*e);
    } else if ((t.kind == TK::Name || t.kind == TK::String || t.kind == TK::Int || t.kind == TK::Float || is_op("[") ||
                is_op("{")) &&
               !(t.kind == TK::Name && (t.text == "else" || t.text == "or" || t.text == "and"))) {
      if (is_name("is")) fail("you cannot chain multiple tests with is");
      e->items.push_back(parse_postfix(parse_primary()));
    }
    return checked(std::move(e));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int block_depth_ = 0;
};

}  // namespace

Template parse(const std::string& source) { return Parser(tokenize(source)).run(); }

}  // namespace izwi::jinja
