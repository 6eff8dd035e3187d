#include "structured/token_trie.h"

#include <algorithm>
#include <numeric>

namespace izwi::structured {

TokenTrie::TokenTrie(const std::vector<std::string>& strings) {
  std::vector<int32_t> order(strings.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return strings[a] < strings[b]; });

  nodes_.push_back({0, 0, 0, 0, 0});
  std::vector<int32_t> path = {0};  // path[d] = node at depth d on the current string
  const std::string* previous = nullptr;
  for (const int32_t item : order) {
    const std::string& s = strings[item];
    if (s.empty()) continue;
    size_t common = 0;
    if (previous) {
      const size_t limit = std::min(previous->size(), s.size());
      while (common < limit && (*previous)[common] == s[common]) ++common;
    }
    while (path.size() > common + 1) {  // close the nodes below the common prefix
      nodes_[path.back()].subtree_end = static_cast<int32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      const int32_t items_at = static_cast<int32_t>(items_.size());
      nodes_.push_back({0, items_at, items_at, static_cast<int32_t>(d + 1), static_cast<uint8_t>(s[d])});
      path.push_back(static_cast<int32_t>(nodes_.size() - 1));
    }
    // Sorted order puts equal strings together, so a node's items stay contiguous.
    Node& last = nodes_[path.back()];
    items_.push_back(item);
    last.items_end = static_cast<int32_t>(items_.size());
    max_depth_ = std::max(max_depth_, static_cast<int32_t>(s.size()));
    previous = &s;
  }
  while (!path.empty()) {
    nodes_[path.back()].subtree_end = static_cast<int32_t>(nodes_.size());
    path.pop_back();
  }
}

}  // namespace izwi::structured
