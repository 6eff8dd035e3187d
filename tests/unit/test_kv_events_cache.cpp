// KV events of the prefix cache: the documented block hash, what the tree records on insertion,
// eviction and when recording starts, and that replaying the events rebuilds the cached set.

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <variant>

#include "cache/block_hash.h"
#include "cache/kv_cache_manager.h"
#include "common/kv_event_checks.h"

namespace izwi {
namespace {

std::vector<int32_t> iota_tokens(int32_t n, int32_t start = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), start);
  return t;
}

TEST(KvEventsCache, BlockHashIsTheDocumentedFnv1a) {
  // Pinned values: an indexer recomputing the hash elsewhere must get exactly these.
  const std::vector<int32_t> first = {1, 2, 3, 4};
  const std::vector<int32_t> second = {5, 6, 7, 8};
  const std::vector<int32_t> extremes = {-1, 0, 2147483647, 7};
  const uint64_t a = block_hash(kRootBlockHash, first.data(), 4);
  EXPECT_EQ(a, 0x7e75ba253efd3fc1ull);
  EXPECT_EQ(block_hash(a, second.data(), 4), 0x6cdb6eff59291782ull);
  EXPECT_EQ(block_hash(kRootBlockHash, extremes.data(), 4), 0xbd9a8cb80973c88aull);
  EXPECT_EQ(a, testing::documented_block_hash(std::nullopt, first, 0, 4));
  EXPECT_EQ(block_hash(a, second.data(), 4), testing::documented_block_hash(a, second, 0, 4));
}

TEST(KvEventsCache, NothingIsRecordedUntilAsked) {
  KVCacheManager m(8, 4, true, 0);
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(m.allocate(1, 0, 8, nullptr, &copies));
  m.commit(1, iota_tokens(8), 8);
  EXPECT_TRUE(m.take_kv_events().empty());
  // The hashes exist all the same.
  EXPECT_EQ(m.tree().block_hashes().size(), 2u);
}

TEST(KvEventsCache, StoresAlongOneChainShareOneEventAndAPrefixHitStoresOnlyNewBlocks) {
  KVCacheManager m(16, 4, true, 0);
  m.record_kv_events(true);
  EXPECT_TRUE(m.take_kv_events().empty());  // nothing cached yet: no snapshot
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(10);
  ASSERT_TRUE(m.allocate(1, 0, 10, nullptr, &copies));
  m.commit(1, a, 10);
  std::vector<KvEvent> events = m.take_kv_events();
  ASSERT_EQ(events.size(), 1u);
  const auto& first = std::get<KvBlockStored>(events[0]);
  const std::vector<uint64_t> chain = testing::chain_hashes(a, 4, 2);
  EXPECT_EQ(first.block_hashes, chain);
  EXPECT_FALSE(first.parent_block_hash.has_value());
  EXPECT_EQ(first.token_ids, iota_tokens(8));
  EXPECT_EQ(first.block_size, 4);

  // Same 8-token prefix, another tail: only the third block is new, under the second.
  std::vector<int32_t> b = iota_tokens(8);
  b.insert(b.end(), {50, 51, 52, 53, 54});
  const PrefixMatch hit = m.match_prefix(b);
  ASSERT_EQ(hit.num_tokens, 8);
  ASSERT_TRUE(m.allocate(2, 8, 13, &hit, &copies));
  m.commit(2, b, 13);
  events = m.take_kv_events();
  ASSERT_EQ(events.size(), 1u);
  const auto& second = std::get<KvBlockStored>(events[0]);
  EXPECT_EQ(second.block_hashes, std::vector<uint64_t>{testing::chain_hashes(b, 4, 3)[2]});
  EXPECT_EQ(second.parent_block_hash, chain[1]);
  EXPECT_EQ(second.token_ids, (std::vector<int32_t>{50, 51, 52, 53}));
  EXPECT_TRUE(m.take_kv_events().empty());  // taken once
}

TEST(KvEventsCache, EvictionsAreRemovalsLeafFirst) {
  KVCacheManager m(4, 2, true, 0);
  m.record_kv_events(true);
  std::vector<BlockCopy> copies;
  const std::vector<int32_t> a = iota_tokens(8);
  ASSERT_TRUE(m.allocate(1, 0, 8, nullptr, &copies));
  m.commit(1, a, 8);
  m.free(1);
  const std::vector<uint64_t> chain = testing::chain_hashes(a, 2, 4);
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(m.take_kv_events()), "");
  // An unrelated sequence needs two blocks: the tail of the chain is evicted, leaf first.
  ASSERT_TRUE(m.allocate(2, 0, 4, nullptr, &copies));
  const std::vector<KvEvent> events = m.take_kv_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(std::get<KvBlockRemoved>(events[0]).block_hashes, (std::vector<uint64_t>{chain[3], chain[2]}));
  ASSERT_EQ(replay.apply(events), "");
  EXPECT_EQ(replay.hashes(), m.tree().block_hashes());
}

TEST(KvEventsCache, StartingToRecordFirstDescribesTheCachedBlocks) {
  KVCacheManager m(16, 2, true, 0);
  std::vector<BlockCopy> copies;
  std::vector<int32_t> b = iota_tokens(4);
  b.insert(b.end(), {40, 41, 42, 43});
  ASSERT_TRUE(m.allocate(1, 0, 8, nullptr, &copies));
  m.commit(1, iota_tokens(8), 8);
  ASSERT_TRUE(m.allocate(2, 0, 8, nullptr, &copies));
  m.commit(2, b, 8);  // a branch after two shared blocks
  ASSERT_EQ(m.tree().num_nodes(), 6);

  m.record_kv_events(true);
  std::vector<KvEvent> events = m.take_kv_events();
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(events[0]));
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(events), "");
  EXPECT_EQ(replay.hashes(), m.tree().block_hashes());

  // Stopping drops what was not taken; starting again describes the cache again.
  m.free(1);
  m.free(2);
  ASSERT_TRUE(m.allocate(3, 0, 32, nullptr, &copies));  // evicts everything
  m.record_kv_events(false);
  EXPECT_TRUE(m.take_kv_events().empty());
  EXPECT_EQ(m.tree().num_nodes(), 0);
  m.record_kv_events(true);
  EXPECT_TRUE(m.take_kv_events().empty());  // an empty cache needs no description
}

TEST(KvEventsCache, ReplayRebuildsTheCachedSetUnderRandomWork) {
  // Prompts from a few shared stems over a small pool: stores, prefix hits and evictions
  // interleave; after every operation the replayed set equals the tree's.
  constexpr int32_t kBlock = 2;
  KVCacheManager m(12, kBlock, true, 0);
  m.record_kv_events(true);
  testing::KvEventReplay replay;
  std::mt19937 rng(7);
  std::map<uint64_t, std::vector<int32_t>> live;
  std::vector<BlockCopy> copies;
  int32_t removals = 0;
  for (uint64_t seq = 1; seq <= 400; ++seq) {
    if (!live.empty() && (live.size() >= 3 || rng() % 2 == 0)) {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      m.free(it->first);
      live.erase(it);
    } else {
      std::vector<int32_t> tokens;
      const int32_t stem = static_cast<int32_t>(rng() % 3);
      const int32_t length = 2 + static_cast<int32_t>(rng() % 9);
      for (int32_t i = 0; i < length; ++i) tokens.push_back(i < 4 ? stem : static_cast<int32_t>(rng() % 4));
      const PrefixMatch hit = m.match_prefix(tokens);
      if (m.allocate(seq, hit.num_tokens, length, &hit, &copies)) {
        m.commit(seq, tokens, length);
        live.emplace(seq, tokens);
      }
    }
    for (const KvEvent& event : m.take_kv_events()) {
      removals += std::holds_alternative<KvBlockRemoved>(event) ? 1 : 0;
      ASSERT_EQ(replay.apply(event), "") << "after operation " << seq;
    }
    ASSERT_EQ(replay.hashes(), m.tree().block_hashes()) << "after operation " << seq;
    ASSERT_EQ(m.check_invariants(), "");
  }
  EXPECT_GT(removals, 0);
}

}  // namespace
}  // namespace izwi
