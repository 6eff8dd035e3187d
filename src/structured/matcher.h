#pragma once
// The parse of one output as it grows: accepts bytes (a token's at a time), says whether the
// document may end, and rolls back whole steps. Copies are cheap (the history of thread sets) and
// share the interned stacks, which only grow. One request's state: use a matcher (and its copies)
// from one thread at a time.

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "structured/grammar.h"
#include "structured/parser.h"
#include "structured/stack_pool.h"

namespace izwi::structured {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  /// Advances by all of `bytes` as one step, or returns false and stays unchanged if the grammar
  /// rejects them (an empty string is accepted as an empty step).
  bool accept_bytes(std::string_view bytes);
  /// The text so far is a complete document (the output may end here).
  bool can_end() const { return history_.back().complete; }
  /// The text so far can still grow (some byte is allowed next).
  bool can_continue() const { return !history_.back().threads.empty(); }
  /// Undoes the last `steps` accepted steps (at most num_steps()).
  void rollback(size_t steps);
  size_t num_steps() const { return history_.size() - 1; }

  const ParseState& state() const { return history_.back(); }
  const Grammar& grammar() const { return *grammar_; }
  StackPool& stacks() { return *stacks_; }
  Parser& parser() { return parser_; }

  /// A TokenMasker's memo (`owner` is the masker's id): for a thread (node, stack), which of the
  /// node's undecided token suffixes the real stack accepts. Stacks are interned and never change,
  /// so an entry stays valid across steps, rollbacks and copies.
  struct ExitMemo {
    uint64_t owner = 0;
    std::unordered_map<uint64_t, std::vector<int32_t>> accepted;
  };
  ExitMemo& exit_memo() { return exit_memo_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<StackPool> stacks_;
  Parser parser_;
  std::vector<ParseState> history_;  ///< state before the first step, then after each
  ParseState scratch_[2];
  ExitMemo exit_memo_;
};

}  // namespace izwi::structured
