#include "structured/grammar_builder.h"

#include "common/check.h"
#include "izwi/errors.h"

namespace izwi::structured {

GrammarBuilder::GrammarBuilder(size_t max_nodes) : max_nodes_(max_nodes) {}

int32_t GrammarBuilder::add_node() {
  if (grammar_.nodes.size() >= max_nodes_) {
    fail(ErrorCode::InvalidArgument, "JSON schema: too large, its grammar exceeds {} states (max_grammar_states)",
         max_nodes_);
  }
  grammar_.nodes.emplace_back();
  return static_cast<int32_t>(grammar_.nodes.size() - 1);
}

int32_t GrammarBuilder::declare_rule(std::string name) {
  grammar_.rules.push_back({-1, -1, std::move(name)});
  return static_cast<int32_t>(grammar_.rules.size() - 1);
}

void GrammarBuilder::define_rule(int32_t rule, Fragment body) {
  // A fresh end node: the body's exit may have other edges (a loop), which must not pop.
  const int32_t end = add_node();
  add_epsilon(body.end, end);
  grammar_.nodes[end].rule_end = true;
  grammar_.rules[rule].start = body.start;
  grammar_.rules[rule].end = end;
}

Fragment GrammarBuilder::empty() {
  const int32_t n = add_node();
  return {n, n};
}

Fragment GrammarBuilder::bytes(const ByteSet& set) {
  const int32_t from = add_node();
  const int32_t to = add_node();
  add_bytes(from, set, to);
  return {from, to};
}

Fragment GrammarBuilder::literal(std::string_view text) {
  const int32_t start = add_node();
  int32_t at = start;
  for (const char c : text) {
    const int32_t next = add_node();
    add_bytes(at, ByteSet::of(static_cast<uint8_t>(c)), next);
    at = next;
  }
  return {start, at};
}

Fragment GrammarBuilder::call(int32_t rule) {
  const int32_t from = add_node();
  const int32_t to = add_node();
  grammar_.nodes[from].call_edges.push_back({rule, to});
  return {from, to};
}

Fragment GrammarBuilder::seq(const std::vector<Fragment>& parts) {
  if (parts.empty()) return empty();
  for (size_t i = 1; i < parts.size(); ++i) add_epsilon(parts[i - 1].end, parts[i].start);
  return {parts.front().start, parts.back().end};
}

Fragment GrammarBuilder::alt(const std::vector<Fragment>& choices) {
  const int32_t start = add_node();
  const int32_t end = add_node();
  for (const Fragment& choice : choices) {
    add_epsilon(start, choice.start);
    add_epsilon(choice.end, end);
  }
  return {start, end};
}

Fragment GrammarBuilder::optional(Fragment inner) {
  const Fragment result = alt({inner});
  add_epsilon(result.start, result.end);
  return result;
}

Fragment GrammarBuilder::star(Fragment inner) {
  const int32_t loop = add_node();
  const int32_t end = add_node();
  add_epsilon(loop, inner.start);
  add_epsilon(inner.end, loop);
  add_epsilon(loop, end);
  return {loop, end};
}

Fragment GrammarBuilder::plus(Fragment inner) {
  const int32_t end = add_node();
  add_epsilon(inner.end, inner.start);
  add_epsilon(inner.end, end);
  return {inner.start, end};
}

Fragment GrammarBuilder::repeat(const std::function<Fragment()>& make, size_t min, size_t max) {
  std::vector<Fragment> parts;
  for (size_t i = 0; i < min; ++i) parts.push_back(make());
  if (max == kUnbounded) {
    parts.push_back(star(make()));
  } else if (max > min) {
    Fragment tail = optional(make());
    for (size_t i = min + 1; i < max; ++i) tail = optional(seq({make(), tail}));
    parts.push_back(tail);
  }
  return seq(parts);
}

Grammar GrammarBuilder::finish(int32_t root) {
  for (const Grammar::Rule& rule : grammar_.rules)
    IZWI_CHECK(rule.start >= 0, "grammar rule never defined: {}", rule.name);
  grammar_.root_rule = root;
  return std::move(grammar_);
}

}  // namespace izwi::structured
