#include <gtest/gtest.h>

#include <numeric>

#include "cache/kv_cache_manager.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

std::vector<int32_t> iota_tokens(int32_t n, int32_t start = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), start);
  return t;
}

void expect_consistent(const KVCacheManager& m) { EXPECT_EQ(m.check_invariants(), ""); }

TEST(KVCacheManager, AllocatesGrowsAndFrees) {
  KVCacheManager m(8, 4, /*prefix_cache=*/false, 0);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(m.allocate(1, 0, 5, nullptr, &copies));  // 5 positions -> 2 blocks
  EXPECT_EQ(m.block_table(1), (std::vector<int32_t>{0, 1}));
  ASSERT_TRUE(m.allocate(1, 5, 8, nullptr, &copies));  // still 2 blocks
  EXPECT_EQ(m.block_table(1).size(), 2u);
  ASSERT_TRUE(m.allocate(1, 8, 9, nullptr, &copies));
  EXPECT_EQ(m.block_table(1).size(), 3u);
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(m.stats().free_blocks, 5);
  expect_consistent(m);
  m.free(1);
  m.free(1);  // idempotent
  EXPECT_EQ(m.stats().free_blocks, 8);
  expect_consistent(m);
}

TEST(KVCacheManager, FailedAllocationIsTransactional) {
  KVCacheManager m(4, 4, true, 2);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(m.allocate(1, 0, 12, nullptr, &copies));  // 3 blocks
  const KVCacheStats before = m.stats();
  EXPECT_FALSE(m.allocate(2, 0, 8, nullptr, &copies));  // needs 2, 1 free
  EXPECT_FALSE(m.has(2));
  EXPECT_EQ(m.state_slot(2), -1);
  EXPECT_EQ(m.stats().free_blocks, before.free_blocks);
  EXPECT_EQ(m.stats().state_slots_free, 1);
  EXPECT_FALSE(m.allocate(1, 12, 20, nullptr, &copies));  // growth beyond the pool
  EXPECT_EQ(m.block_table(1).size(), 3u);
  expect_consistent(m);
}

TEST(KVCacheManager, PrefixHitSharesFullBlocksAndLeavesOneTokenToCompute) {
  KVCacheManager m(16, 4, true, 0);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(10);
  ASSERT_TRUE(m.allocate(1, 0, 10, nullptr, &copies));
  m.commit(1, a, 10);  // blocks 0 and 1 are full -> cached
  EXPECT_EQ(m.tree().num_nodes(), 2);

  // Same 8-token prefix, different tail: hit of 2 blocks.
  std::vector<int32_t> b = iota_tokens(8);
  b.push_back(77);
  PrefixMatch hit = m.match_prefix(b);
  EXPECT_EQ(hit.num_tokens, 8);
  ASSERT_TRUE(m.allocate(2, 8, 9, &hit, &copies));
  EXPECT_EQ(m.block_table(2)[0], m.block_table(1)[0]);
  EXPECT_EQ(m.block_table(2)[1], m.block_table(1)[1]);
  EXPECT_NE(m.block_table(2)[2], m.block_table(1)[2]);
  EXPECT_EQ(m.ref_count(m.block_table(1)[0]), 3);  // two sequences + the tree
  expect_consistent(m);

  // A prompt that is exactly the cached 8 tokens keeps its last block to compute.
  PrefixMatch exact = m.match_prefix(iota_tokens(8));
  EXPECT_EQ(exact.num_tokens, 4);
  m.free(1);
  m.free(2);
  EXPECT_EQ(m.stats().cached_blocks, 2);
  EXPECT_EQ(m.stats().free_blocks, 14);
  expect_consistent(m);
}

TEST(KVCacheManager, EvictsCachedBlocksWhenTheFreeListRunsOut) {
  KVCacheManager m(4, 2, true, 0);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(8);
  ASSERT_TRUE(m.allocate(1, 0, 8, nullptr, &copies));
  m.commit(1, a, 8);
  m.free(1);
  EXPECT_EQ(m.stats().cached_blocks, 4);
  EXPECT_EQ(m.stats().free_blocks, 0);
  // A new, unrelated sequence gets blocks by evicting the cached ones: the leaf (block 3),
  // then its parent (block 2); the free list hands out the most recently freed first.
  ASSERT_TRUE(m.allocate(2, 0, 4, nullptr, &copies));
  EXPECT_EQ(m.block_table(2), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(m.stats().cached_blocks, 2);
  // The reused blocks forgot their old prefix: only the first two blocks still match.
  EXPECT_EQ(m.match_prefix(iota_tokens(9)).num_tokens, 4);
  expect_consistent(m);
}

TEST(KVCacheManager, AdoptingAPrefixDoesNotCountItsBlocksAsReclaimable) {
  KVCacheManager m(3, 2, true, 0);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(4);
  ASSERT_TRUE(m.allocate(1, 0, 4, nullptr, &copies));
  m.commit(1, a, 4);
  m.free(1);  // 2 cached, 1 free
  std::vector<int32_t> b = iota_tokens(4);
  b.insert(b.end(), {9, 9, 9, 9});
  PrefixMatch hit = m.match_prefix(b);
  ASSERT_EQ(hit.num_tokens, 4);
  // Needs 2 fresh blocks; only 1 is free and the cached ones are being adopted.
  EXPECT_FALSE(m.allocate(2, 4, 8, &hit, &copies));
  EXPECT_EQ(m.stats().cached_blocks, 2);
  ASSERT_TRUE(m.allocate(2, 4, 6, &hit, &copies));
  expect_consistent(m);
}

TEST(KVCacheManager, ConcurrentDuplicatePrefixKeepsTheFirstCachedCopy) {
  KVCacheManager m(8, 2, true, 0);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(4);
  ASSERT_TRUE(m.allocate(1, 0, 4, nullptr, &copies));
  ASSERT_TRUE(m.allocate(2, 0, 4, nullptr, &copies));  // same prompt, computed in parallel
  m.commit(1, a, 4);
  m.commit(2, a, 4);
  EXPECT_EQ(m.tree().num_nodes(), 2);
  expect_consistent(m);
  m.free(1);
  expect_consistent(m);
  m.free(2);
  EXPECT_EQ(m.stats().cached_blocks, 2);
  EXPECT_EQ(m.stats().free_blocks, 6);
  expect_consistent(m);
}

TEST(KVCacheManager, AbortMidPrefillThenHitReadsOnlyCommittedBlocks) {
  // A chunked prefill commits its first full blocks, then is aborted. The cached blocks must
  // stay valid (held by the tree), and a later hit must reuse exactly those.
  KVCacheManager m(8, 2, true, 0);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> prompt = iota_tokens(7);
  ASSERT_TRUE(m.allocate(1, 0, 4, nullptr, &copies));
  m.commit(1, prompt, 4);
  ASSERT_TRUE(m.allocate(1, 4, 6, nullptr, &copies));  // next chunk planned...
  m.free(1);                                           // ...and aborted before it ran
  expect_consistent(m);
  PrefixMatch hit = m.match_prefix(prompt);
  EXPECT_EQ(hit.num_tokens, 4);
  ASSERT_TRUE(m.allocate(2, 4, 7, &hit, &copies));
  EXPECT_EQ(m.ref_count(hit.nodes[0]->block), 2);
  expect_consistent(m);
}

TEST(KVCacheManager, ForkSharesBlocksAndCopiesOnWrite) {
  KVCacheManager m(8, 4, false, 2);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(m.allocate(1, 0, 6, nullptr, &copies));
  m.fork(1, 2);
  EXPECT_EQ(m.block_table(1), m.block_table(2));
  EXPECT_NE(m.state_slot(1), m.state_slot(2));
  const int32_t shared_tail = m.block_table(1)[1];
  EXPECT_EQ(m.ref_count(shared_tail), 2);
  // Sequence 2 writes position 6, inside the shared second block: it gets its own copy.
  ASSERT_TRUE(m.allocate(2, 6, 7, nullptr, &copies));
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, shared_tail);
  EXPECT_EQ(copies[0].dst, m.block_table(2)[1]);
  EXPECT_NE(m.block_table(2)[1], shared_tail);
  EXPECT_EQ(m.block_table(2)[0], m.block_table(1)[0]);  // untouched first block stays shared
  EXPECT_EQ(m.ref_count(shared_tail), 1);
  // Sequence 1 now owns its tail alone: no copy.
  copies.clear();
  ASSERT_TRUE(m.allocate(1, 6, 7, nullptr, &copies));
  EXPECT_TRUE(copies.empty());
  expect_consistent(m);
  m.free(1);
  m.free(2);
  EXPECT_EQ(m.stats().free_blocks, 8);
  expect_consistent(m);
}

TEST(KVCacheManager, StateSlotsFollowSequences) {
  KVCacheManager m(8, 4, false, 2);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(m.allocate(1, 0, 4, nullptr, &copies));
  ASSERT_TRUE(m.allocate(2, 0, 4, nullptr, &copies));
  EXPECT_FALSE(m.allocate(3, 0, 4, nullptr, &copies));  // no slot left
  EXPECT_FALSE(m.has(3));
  m.free(1);
  ASSERT_TRUE(m.allocate(3, 0, 4, nullptr, &copies));
  EXPECT_EQ(m.state_slot(3), 0);  // the freed slot
  expect_consistent(m);
}

}  // namespace
}  // namespace izwi
