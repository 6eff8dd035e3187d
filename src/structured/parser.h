#pragma once
// One step of the byte-level parse: the closure of a set of configurations over epsilon edges,
// calls (push) and rule ends (pop), and the advance of a state by one byte. A state is the set of
// threads (node, stack) sitting at nodes that consume bytes, plus whether the document may end.

#include <cstdint>
#include <vector>

#include "structured/grammar.h"
#include "structured/stack_pool.h"

namespace izwi::structured {

struct Thread {
  int32_t node;
  int32_t stack;
};

struct ParseState {
  std::vector<Thread> threads;  ///< configurations at nodes with byte edges, without repeats
  bool complete = false;        ///< the root rule has ended: the document may end here
  bool left_rule = false;       ///< kOpenStack was popped (mask precompute only)
};

/// Scratch for closures over one grammar; cheap to keep, not thread-safe.
class Parser {
 public:
  explicit Parser(const Grammar& grammar);

  /// `out` = the closure of `seeds`.
  void closure(StackPool& stacks, const std::vector<Thread>& seeds, ParseState& out);
  /// `out` = the state after `byte` from `in` (`out` must not be `in`). False if no thread took the byte.
  bool advance(StackPool& stacks, const ParseState& in, uint8_t byte, ParseState& out);
  /// The state at the start of the document.
  void start(StackPool& stacks, ParseState& out);
  /// The state after the rule whose caller is `stack` ends (complete only, for kEmptyStack).
  void pop(StackPool& stacks, int32_t stack, ParseState& out);

 private:
  bool visit(Thread thread);

  const Grammar* grammar_;
  std::vector<Thread> seeds_;
  std::vector<Thread> work_;
  std::vector<uint32_t> stamp_;       ///< per node: generation of the closure that visited it
  std::vector<int32_t> stamp_stack_;  ///< per node: the first stack it was visited with
  std::vector<Thread> more_visited_;  ///< further (node, stack) pairs of this closure
  uint32_t generation_ = 0;
};

}  // namespace izwi::structured
