#pragma once
// The parsed template: expression and statement nodes, each with the line it starts on.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "template/value.h"

namespace izwi::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    List,         // items (tuple: is_tuple)
    Dict,         // keys/items pairs in `items` (even: key, odd: value)
    GetAttr,      // object . name
    GetItem,      // object [ items[0] ]
    Slice,        // object [ start : stop : step ] (absent parts are null)
    Call,         // object ( items, keywords )
    Filter,       // object | name ( items, keywords ); object null in {% filter %}
    Test,         // object is [not] name ( items )
    Unary,        // op object  ("not", "-", "+")
    Binary,       // object op other
    Conditional,  // items[0] if object else items[1] (items[1] may be null)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;  // Name, GetAttr, Filter, Test; the operator of Unary/Binary
  ExprPtr object;
  ExprPtr other;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  bool is_tuple = false;
  bool negated = false;  // Test: "is not"
  int height = 1;        // of the tree below, bounded by the parser (evaluation and destruction recurse)

  Expr(Kind k, int l) : kind(k), line(l) {}
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

/// Where {% set %} and {% for %} store: a name, names to unpack, or namespace.attribute.
struct Target {
  std::vector<std::string> names;  ///< one, or several to unpack
  std::string attribute;           ///< non-empty: names[0] is a namespace
};

struct Stmt {
  enum class Kind { Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, Break, Continue, Scope };
  Kind kind;
  int line = 0;
  std::string text;  // Text; Macro: its name
  ExprPtr expr;      // Output, Set's value, For's iterable, CallBlock's call, FilterBlock's filter chain
  ExprPtr filter;    // For: the `if` clause
  Target target;     // Set, SetBlock, For
  std::vector<std::pair<ExprPtr, Body>> branches;       // If: conditions and bodies
  Body body;                                            // For, SetBlock, Macro, CallBlock, FilterBlock, Scope
  Body else_body;                                       // If, For
  std::vector<std::pair<std::string, ExprPtr>> params;  // Macro (default may be null); CallBlock's caller args
  bool recursive = false;                               // For

  Stmt(Kind k, int l) : kind(k), line(l) {}
};

struct Template {
  Body body;
};

}  // namespace izwi::jinja
