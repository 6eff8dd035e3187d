#pragma once
// A byte trie over a list of strings, stored in preorder so that a walk is a loop over an array:
// node u's subtree is [u, subtree_end), its children start at u + 1. Node 0 is the empty prefix.

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::structured {

class TokenTrie {
 public:
  struct Node {
    int32_t subtree_end;
    int32_t items_begin;  ///< items() of the strings ending exactly here: [items_begin, items_end)
    int32_t items_end;
    int32_t depth;  ///< bytes from the root
    uint8_t byte;   ///< the byte that leads here from the parent
  };

  TokenTrie() = default;
  /// Item i is strings[i]; ids of empty strings are left out.
  explicit TokenTrie(const std::vector<std::string>& strings);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& items() const { return items_; }
  int32_t max_depth() const { return max_depth_; }
  bool empty() const { return nodes_.size() <= 1; }

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> items_;
  int32_t max_depth_ = 0;
};

}  // namespace izwi::structured
