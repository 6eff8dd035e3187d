#pragma once
// Prefix cache over full KV blocks. Each edge is one block's worth of tokens, so a node is
// (token chunk, physical block); block-aligned keys mean nodes never split. A node's lock count
// is the number of live sequences whose prefix runs through it; sequences lock whole paths, so
// an unlocked node has only unlocked descendants. Unlocked leaves are evicted least recently
// used first, and eviction cascades to parents that become unlocked leaves. Each node carries
// the hash it is published under (cache/block_hash.h); while recording, every insertion and
// eviction is a KV event (cache/kv_event_log.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/kv_event_log.h"

namespace izwi {

struct TokenChunkHash {
  size_t operator()(const std::vector<int32_t>& chunk) const noexcept;
};

struct RadixNode {
  std::vector<int32_t> tokens;  ///< The block's tokens (empty at the root).
  int32_t block = -1;           ///< Physical block holding their K/V.
  uint64_t hash = 0;            ///< block_hash of the parent's hash and `tokens`.
  RadixNode* parent = nullptr;
  std::unordered_map<std::vector<int32_t>, std::unique_ptr<RadixNode>, TokenChunkHash> children;
  int32_t lock_count = 0;
  uint64_t last_access = 0;
};

class RadixTree {
 public:
  explicit RadixTree(int32_t block_size);

  int32_t block_size() const { return block_size_; }
  /// Nodes of the longest cached chain matching tokens[0, max_blocks * block_size). No side effects.
  std::vector<RadixNode*> match(const int32_t* tokens, int32_t max_blocks) const;
  /// The child of `parent` (nullptr = root) for `chunk` (block_size tokens). If absent it is
  /// created holding `block` and `*inserted` is set; otherwise the existing node is returned.
  RadixNode* insert(RadixNode* parent, const int32_t* chunk, int32_t block, bool* inserted);
  void lock(RadixNode* node);
  /// Unlocking a node that is not locked is a bug (throws Internal).
  void unlock(RadixNode* node);
  /// Removes up to `n` unlocked nodes, least recently used leaves first; returns their blocks.
  std::vector<int32_t> evict(int32_t n);

  int32_t num_nodes() const { return num_nodes_; }
  int32_t evictable_blocks() const { return unlocked_nodes_; }
  int32_t protected_blocks() const { return num_nodes_ - unlocked_nodes_; }
  /// Visits every node except the root, each after its parent.
  void for_each_node(const std::function<void(const RadixNode&)>& visit) const;
  /// Hashes of every cached block, sorted.
  std::vector<uint64_t> block_hashes() const;

  /// Starts or stops recording KV events. Starting while blocks are cached first records the
  /// tree as it is (AllBlocksCleared, then every block parent first), so whoever sees every event
  /// from then on can rebuild the cached set exactly.
  void record_events(bool on);
  /// The events recorded since the last call, oldest first.
  std::vector<KvEvent> take_events() { return events_.take(); }

 private:
  using LeafKey = std::pair<uint64_t, RadixNode*>;
  bool is_evictable_leaf(const RadixNode* node) const;
  /// What a KV event names as the node's parent: empty for a child of the root.
  std::optional<uint64_t> parent_hash(const RadixNode& node) const;

  int32_t block_size_;
  RadixNode root_;
  std::set<LeafKey> evictable_leaves_;  ///< Ordered by last access: begin() is evicted first.
  uint64_t clock_ = 0;
  int32_t num_nodes_ = 0;
  int32_t unlocked_nodes_ = 0;
  KvEventLog events_;
};

}  // namespace izwi
