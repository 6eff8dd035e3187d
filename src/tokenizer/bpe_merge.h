#pragma once
// The byte-pair merge loop shared by tokenizer.json BPE and Tekken: symbols are a linked list
// over the bytes of one pre-token; a min-heap holds candidate merges of adjacent symbols, ordered
// by rank and then position (leftmost first), as both Hugging Face and tiktoken order them.
// Entries made stale by earlier merges are skipped, so a piece of n bytes costs O(n log n).

#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

namespace izwi::bpe {

struct Symbol {
  uint32_t start = 0;  ///< byte offset in the piece
  uint32_t len = 0;    ///< 0 once merged into its left neighbour
  int32_t id = 0;
  int32_t prev = -1, next = -1;
};

/// A merge the model allows: its priority and the id of the merged symbol.
struct Merge {
  uint32_t rank;
  int32_t id;
};

/// Merges `symbols` (initially one per byte, linked in order) in place and appends the ids of
/// what remains to `out`. `lookup(left, right)` returns the merge of two adjacent symbols, if any.
template <typename Lookup>
void merge(std::vector<Symbol>& symbols, Lookup&& lookup, std::vector<int32_t>& out) {
  struct Candidate {
    uint32_t rank;
    int32_t left;
    int32_t id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  const auto push = [&](int32_t left) {
    const Symbol& l = symbols[left];
    if (l.next < 0) return;
    const Symbol& r = symbols[l.next];
    if (const std::optional<Merge> m = lookup(l, r)) heap.push({m->rank, left, m->id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& l = symbols[c.left];
    if (l.len == 0 || l.next < 0) continue;
    Symbol& r = symbols[l.next];
    // Either neighbour may have changed since this was queued: apply it only if it still holds.
    const std::optional<Merge> m = lookup(l, r);
    if (!m || m->rank != c.rank || m->id != c.id) continue;
    l.len += r.len;
    l.id = c.id;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = c.left;
    r.len = 0;
    if (l.prev >= 0) push(l.prev);
    push(c.left);
  }
  for (int32_t i = 0; i >= 0 && i < static_cast<int32_t>(symbols.size()); i = symbols[i].next)
    out.push_back(symbols[i].id);
}

/// One symbol per byte of `piece`, with ids from `byte_ids`.
inline void init_bytes(std::string_view piece, const int32_t* byte_ids, std::vector<Symbol>& symbols) {
  symbols.resize(piece.size());
  for (uint32_t i = 0; i < piece.size(); ++i) {
    symbols[i] = {i, 1, byte_ids[static_cast<uint8_t>(piece[i])], static_cast<int32_t>(i) - 1,
                  i + 1 < piece.size() ? static_cast<int32_t>(i) + 1 : -1};
  }
}

}  // namespace izwi::bpe
