#pragma once
// The call stacks of a parse, as interned persistent lists: a stack is the id of its top frame, and
// equal stacks get equal ids, so threads compare (and deduplicate) by two integers.

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace izwi::structured {

/// The caller of the root rule: popping it completes the document.
constexpr int32_t kEmptyStack = -1;
/// An unknown caller (the per-node mask precompute): popping it leaves the node's rule.
constexpr int32_t kOpenStack = -2;

class StackPool {
 public:
  struct Frame {
    int32_t return_node;
    int32_t parent;
  };

  /// Id of the stack `parent` with `return_node` pushed (the same id for the same pair).
  int32_t push(int32_t return_node, int32_t parent);
  const Frame& at(int32_t stack) const { return frames_[static_cast<size_t>(stack)]; }

 private:
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> index_;
};

}  // namespace izwi::structured
