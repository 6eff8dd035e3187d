#pragma once
// Builds a Grammar from fragments (sub-NFAs with one entry and one exit node), Thompson style.
// Every fragment is fresh nodes: to repeat a piece, build it again (or make it a rule and call it).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "structured/grammar.h"

namespace izwi::structured {

struct Fragment {
  int32_t start;
  int32_t end;
};

class GrammarBuilder {
 public:
  /// Throws InvalidArgument naming the schema limit once the grammar exceeds `max_nodes` nodes.
  explicit GrammarBuilder(size_t max_nodes);

  /// Reserves a rule id (so that it can be called before, or while, its body is built).
  int32_t declare_rule(std::string name);
  void define_rule(int32_t rule, Fragment body);

  Fragment empty();
  Fragment bytes(const ByteSet& set);
  Fragment literal(std::string_view text);
  Fragment call(int32_t rule);
  Fragment seq(const std::vector<Fragment>& parts);
  Fragment alt(const std::vector<Fragment>& choices);
  Fragment optional(Fragment inner);
  Fragment star(Fragment inner);  ///< zero or more
  Fragment plus(Fragment inner);  ///< one or more
  /// `min` to `max` copies of make()'s fragment (kUnbounded: no upper bound). The optional copies
  /// nest (x(x(x)?)?)? so that a count is reached one way only (no duplicate threads).
  Fragment repeat(const std::function<Fragment()>& make, size_t min, size_t max);
  static constexpr size_t kUnbounded = static_cast<size_t>(-1);

  // Direct construction, for pieces that want one node with many byte edges (one thread).
  int32_t add_node();
  void add_bytes(int32_t from, const ByteSet& set, int32_t to) { grammar_.nodes[from].byte_edges.push_back({set, to}); }
  void add_epsilon(int32_t from, int32_t to) { grammar_.nodes[from].epsilon_edges.push_back(to); }

  size_t node_count() const { return grammar_.nodes.size(); }
  /// The grammar with `root` as its start rule; every declared rule must be defined.
  Grammar finish(int32_t root);

 private:
  Grammar grammar_;
  size_t max_nodes_;
};

}  // namespace izwi::structured
