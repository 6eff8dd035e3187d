#pragma once
// Owns the bookkeeping of the paged KV cache: which physical blocks each sequence uses (its
// block table), which full blocks are shared through the prefix tree, and the per-sequence
// state slots. Knows nothing about tensors: the executor applies the block copies it returns.
//
// Ownership: a block's ref count = number of sequence tables holding it + 1 if the prefix tree
// holds it. A sequence locks every tree node on its prefix path; unlocked nodes are evictable.

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/block_allocator.h"
#include "cache/radix_tree.h"
#include "cache/state_cache.h"
#include "layers/step/block_copy.h"

namespace izwi {

/// Cached full blocks matching the start of a token sequence.
struct PrefixMatch {
  std::vector<RadixNode*> nodes;
  int32_t num_tokens = 0;
  /// Physical block of the last matched node, -1 if nothing matched.
  int32_t last_block() const { return nodes.empty() ? -1 : nodes.back()->block; }
};

struct KVCacheStats {
  int32_t total_blocks = 0;
  int32_t free_blocks = 0;    ///< On the free list.
  int32_t cached_blocks = 0;  ///< Held only by the prefix tree (evictable).
  int32_t used_blocks = 0;    ///< Held by live sequences (total - free - cached).
  int32_t state_slots_free = 0;
};

class KVCacheManager {
 public:
  KVCacheManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_cache, int32_t num_state_slots);

  int32_t block_size() const { return block_size_; }
  int32_t num_blocks() const { return allocator_.num_blocks(); }
  bool prefix_cache_enabled() const { return prefix_cache_; }
  /// Blocks needed to hold `num_positions` positions.
  int32_t blocks_for(int32_t num_positions) const { return (num_positions + block_size_ - 1) / block_size_; }

  /// Longest cached prefix of `tokens`, in whole blocks within the first `cacheable` positions,
  /// always leaving at least the last token to compute (its logits are needed). Empty when
  /// prefix caching is off.
  PrefixMatch match_prefix(const std::vector<int32_t>& tokens,
                           int32_t cacheable = std::numeric_limits<int32_t>::max()) const;

  /// Lets `seq` write positions [first_new, num_positions). The first call for a sequence adopts
  /// `prefix` (may be null) and takes a state slot if the model has state. Evicts cached blocks
  /// when the free list is short; copies a shared block before it is written (appends to
  /// `copies`). Returns false and changes nothing when the pool cannot hold the request.
  bool allocate(uint64_t seq, int32_t first_new, int32_t num_positions, const PrefixMatch* prefix,
                std::vector<BlockCopy>* copies);

  /// Positions [0, num_computed) of `seq` now hold valid K/V: offers its newly complete blocks
  /// to the prefix tree (no-op when prefix caching is off).
  void commit(uint64_t seq, const std::vector<int32_t>& tokens, int32_t num_computed);

  /// Releases the sequence's blocks, locks and state slot. Unknown sequences are ignored.
  void free(uint64_t seq);

  /// Makes `child` share all of `parent`'s blocks (copy-on-write on the next write).
  void fork(uint64_t parent, uint64_t child);

  bool has(uint64_t seq) const { return seqs_.count(seq) != 0; }
  const std::vector<int32_t>& block_table(uint64_t seq) const;
  /// -1 when the model keeps no per-sequence state.
  int32_t state_slot(uint64_t seq) const;
  int32_t ref_count(int32_t block) const { return allocator_.ref_count(block); }

  KVCacheStats stats() const;
  const RadixTree& tree() const { return tree_; }
  /// KV events of the prefix tree (RadixTree::record_events); none when prefix caching is off.
  void record_kv_events(bool on) { tree_.record_events(on); }
  std::vector<KvEvent> take_kv_events() { return tree_.take_events(); }
  /// Cross-checks ref counts, locks, slots and block accounting. Empty when consistent,
  /// otherwise a description of the first violation.
  std::string check_invariants() const;

 private:
  struct SeqBlocks {
    std::vector<int32_t> table;    ///< Physical block per logical block.
    std::vector<RadixNode*> path;  ///< Locked tree nodes, one per committed block.
  };

  int32_t block_size_;
  bool prefix_cache_;
  BlockAllocator allocator_;
  RadixTree tree_;
  std::unique_ptr<StateCache> state_;  ///< Null when the model keeps no per-sequence state.
  std::unordered_map<uint64_t, SeqBlocks> seqs_;
};

}  // namespace izwi
