#include "cache/kv_cache_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/check.h"

namespace izwi {

KVCacheManager::KVCacheManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_cache,
                               int32_t num_state_slots)
    : block_size_(block_size), prefix_cache_(enable_prefix_cache), allocator_(num_blocks), tree_(block_size) {
  if (num_state_slots > 0) state_ = std::make_unique<StateCache>(num_state_slots);
}

PrefixMatch KVCacheManager::match_prefix(const std::vector<int32_t>& tokens, int32_t cacheable) const {
  PrefixMatch match;
  if (!prefix_cache_ || tokens.empty()) return match;
  const int32_t max_blocks =
      std::min((static_cast<int32_t>(tokens.size()) - 1) / block_size_, std::max(cacheable, 0) / block_size_);
  match.nodes = tree_.match(tokens.data(), max_blocks);
  match.num_tokens = static_cast<int32_t>(match.nodes.size()) * block_size_;
  return match;
}

bool KVCacheManager::allocate(uint64_t seq, int32_t first_new, int32_t num_positions, const PrefixMatch* prefix,
                              std::vector<BlockCopy>* copies) {
  auto it = seqs_.find(seq);
  const bool is_new = it == seqs_.end();
  const std::vector<RadixNode*> no_nodes;
  const std::vector<RadixNode*>& adopt = (is_new && prefix != nullptr) ? prefix->nodes : no_nodes;
  const int32_t have = is_new ? static_cast<int32_t>(adopt.size()) : static_cast<int32_t>(it->second.table.size());
  const int32_t fresh = std::max(0, blocks_for(num_positions) - have);

  // A shared block must be copied before this sequence writes into it.
  const int32_t write_index = first_new / block_size_;
  const bool copy_on_write = !is_new && write_index < have && allocator_.ref_count(it->second.table[write_index]) > 1;

  if (is_new && state_ && state_->slot(seq) < 0 && state_->num_free() == 0) return false;
  int32_t adopt_unlocked = 0;  // adopting these takes them out of the evictable pool
  for (const RadixNode* node : adopt) adopt_unlocked += node->lock_count == 0 ? 1 : 0;
  const int32_t needed = fresh + (copy_on_write ? 1 : 0);
  if (needed > allocator_.num_free() + tree_.evictable_blocks() - adopt_unlocked) return false;

  if (is_new) {
    it = seqs_.emplace(seq, SeqBlocks{}).first;
    for (RadixNode* node : adopt) {
      tree_.lock(node);
      allocator_.retain(node->block);
      it->second.table.push_back(node->block);
      it->second.path.push_back(node);
    }
    if (state_) state_->acquire(seq);
  }
  if (needed > allocator_.num_free()) {
    for (int32_t block : tree_.evict(needed - allocator_.num_free())) allocator_.release(block);
  }
  SeqBlocks& entry = it->second;
  if (copy_on_write) {
    std::vector<int32_t> fresh_block;
    IZWI_CHECK(allocator_.allocate(1, &fresh_block), "no block for copy-on-write after the capacity check");
    copies->push_back(BlockCopy{entry.table[write_index], fresh_block[0]});
    allocator_.release(entry.table[write_index]);
    entry.table[write_index] = fresh_block[0];
  }
  IZWI_CHECK(allocator_.allocate(fresh, &entry.table), "no blocks after the capacity check");
  return true;
}

void KVCacheManager::commit(uint64_t seq, const std::vector<int32_t>& tokens, int32_t num_computed) {
  if (!prefix_cache_) return;
  auto it = seqs_.find(seq);
  IZWI_CHECK(it != seqs_.end(), "commit for unknown sequence {}", seq);
  SeqBlocks& entry = it->second;
  const int32_t full = std::min(num_computed / block_size_, static_cast<int32_t>(entry.table.size()));
  for (int32_t b = static_cast<int32_t>(entry.path.size()); b < full; ++b) {
    RadixNode* parent = b == 0 ? nullptr : entry.path[b - 1];
    bool inserted = false;
    RadixNode* node =
        tree_.insert(parent, tokens.data() + static_cast<ptrdiff_t>(b) * block_size_, entry.table[b], &inserted);
    if (inserted) allocator_.retain(entry.table[b]);  // the tree's own reference
    tree_.lock(node);
    entry.path.push_back(node);
  }
}

void KVCacheManager::free(uint64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  for (int32_t block : it->second.table) allocator_.release(block);
  for (RadixNode* node : it->second.path) tree_.unlock(node);
  if (state_) state_->release(seq);
  seqs_.erase(it);
}

void KVCacheManager::fork(uint64_t parent, uint64_t child) {
  auto it = seqs_.find(parent);
  IZWI_CHECK(it != seqs_.end(), "fork of unknown sequence {}", parent);
  IZWI_CHECK(seqs_.count(child) == 0, "fork target {} already exists", child);
  SeqBlocks copy = it->second;
  for (int32_t block : copy.table) allocator_.retain(block);
  for (RadixNode* node : copy.path) tree_.lock(node);
  if (state_) state_->acquire(child);
  seqs_.emplace(child, std::move(copy));
}

const std::vector<int32_t>& KVCacheManager::block_table(uint64_t seq) const {
  auto it = seqs_.find(seq);
  IZWI_CHECK(it != seqs_.end(), "no block table for sequence {}", seq);
  return it->second.table;
}

int32_t KVCacheManager::state_slot(uint64_t seq) const { return state_ ? state_->slot(seq) : -1; }

KVCacheStats KVCacheManager::stats() const {
  KVCacheStats s;
  s.total_blocks = allocator_.num_blocks();
  s.free_blocks = allocator_.num_free();
  s.cached_blocks = tree_.evictable_blocks();
  s.used_blocks = s.total_blocks - s.free_blocks - s.cached_blocks;
  s.state_slots_free = state_ ? state_->num_free() : 0;
  return s;
}

std::string KVCacheManager::check_invariants() const {
  std::map<int32_t, int32_t> expected_refs;
  std::map<const RadixNode*, int32_t> expected_locks;
  std::set<int32_t> locked_blocks;
  for (const auto& [seq, entry] : seqs_) {
    for (int32_t block : entry.table) {
      ++expected_refs[block];
      locked_blocks.insert(block);
    }
    for (const RadixNode* node : entry.path) ++expected_locks[node];
    if (state_ && state_->slot(seq) < 0) return fmt::format("sequence {} holds no state slot", seq);
  }
  std::string problem;
  int32_t evictable = 0;
  tree_.for_each_node([&](const RadixNode& node) {
    ++expected_refs[node.block];
    const int32_t locks = expected_locks.count(&node) ? expected_locks.at(&node) : 0;
    if (problem.empty() && node.lock_count != locks) {
      problem = fmt::format("tree node of block {} has lock count {} but {} sequences hold it", node.block,
                            node.lock_count, locks);
    }
    if (problem.empty() && node.parent != nullptr && node.parent->block >= 0 &&
        node.parent->lock_count < node.lock_count) {
      problem = fmt::format("tree node of block {} is locked more than its parent", node.block);
    }
    if (node.lock_count == 0) {
      ++evictable;
    } else {
      locked_blocks.insert(node.block);
    }
  });
  if (!problem.empty()) return problem;
  if (evictable != tree_.evictable_blocks()) {
    return fmt::format("tree reports {} evictable blocks, counted {}", tree_.evictable_blocks(), evictable);
  }
  int32_t zero_refs = 0;
  for (int32_t b = 0; b < allocator_.num_blocks(); ++b) {
    const int32_t expected = expected_refs.count(b) ? expected_refs.at(b) : 0;
    if (allocator_.ref_count(b) != expected) {
      return fmt::format("block {} has ref count {}, expected {}", b, allocator_.ref_count(b), expected);
    }
    zero_refs += expected == 0 ? 1 : 0;
  }
  if (zero_refs != allocator_.num_free()) {
    return fmt::format("{} blocks have no owner but the free list holds {}", zero_refs, allocator_.num_free());
  }
  const int32_t total = allocator_.num_free() + evictable + static_cast<int32_t>(locked_blocks.size());
  if (total != allocator_.num_blocks()) {
    return fmt::format("free {} + evictable {} + locked {} != total {}", allocator_.num_free(), evictable,
                       locked_blocks.size(), allocator_.num_blocks());
  }
  if (state_ && state_->num_free() + static_cast<int32_t>(seqs_.size()) != state_->num_slots()) {
    return fmt::format("{} free state slots + {} sequences != {} slots", state_->num_free(), seqs_.size(),
                       state_->num_slots());
  }
  return {};
}

}  // namespace izwi
