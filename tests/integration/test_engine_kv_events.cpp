// KV events through the Engine: stored blocks under the documented hashes, prefix hits storing only
// new blocks, evictions under block pressure, replay rebuilding kv_cached_block_hashes(), a late
// listener, shutdown, and an engine without a listener.

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <variant>

#include "common/engine_checks.h"
#include "common/kv_event_checks.h"
#include "common/reference.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

constexpr int32_t kBlock = 4;

EngineConfig small_blocks(int32_t num_kv_blocks) {
  EngineConfig config;
  config.block_size = kBlock;
  config.num_kv_blocks = num_kv_blocks;
  return config;
}

Request request(std::vector<int32_t> prompt, int32_t max_tokens) {
  Request r;
  r.prompt_ids = std::move(prompt);
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;  // exactly max_tokens, so the cached positions are known
  return r;
}

std::vector<int32_t> ids(int32_t n, int32_t start) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

/// Prompt and output: the keys of every position the request computed, plus its last token.
std::vector<int32_t> sequence(const Request& r, const Output& out) {
  std::vector<int32_t> all = r.prompt_ids;
  all.insert(all.end(), out.tokens.begin(), out.tokens.end());
  return all;
}

/// Batches as a listener gets them, kept for the test thread.
class Recorder {
 public:
  Engine::KvEventListener listener() {
    return [this](const KvEventBatch& batch) {
      std::lock_guard<std::mutex> lock(mutex_);
      batches_.push_back(batch);
    };
  }
  std::vector<KvEventBatch> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(batches_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<KvEventBatch> batches_;
};

std::vector<KvEvent> events_of(const std::vector<KvEventBatch>& batches) {
  std::vector<KvEvent> events;
  for (const KvEventBatch& batch : batches) {
    EXPECT_FALSE(batch.events.empty());
    EXPECT_GT(batch.timestamp, 1.6e9);  // seconds since the epoch
    events.insert(events.end(), batch.events.begin(), batch.events.end());
  }
  return events;
}

/// Every BlockStored of `events`, in order, as one chain of hashes; checks each continues the last.
std::vector<uint64_t> stored_chain(const std::vector<KvEvent>& events, std::optional<uint64_t> parent) {
  std::vector<uint64_t> chain;
  for (const KvEvent& event : events) {
    const auto* stored = std::get_if<KvBlockStored>(&event);
    if (stored == nullptr) continue;
    EXPECT_EQ(stored->parent_block_hash, chain.empty() ? parent : std::optional<uint64_t>(chain.back()));
    EXPECT_EQ(stored->block_size, kBlock);
    chain.insert(chain.end(), stored->block_hashes.begin(), stored->block_hashes.end());
  }
  return chain;
}

std::vector<uint64_t> sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(EngineKvEvents, ARequestStoresItsBlocksUnderTheDocumentedHashes) {
  Recorder recorder;  // outlives the engine, whose shutdown calls the listener a last time
  Engine engine(testing::fixture_dir("llama-tiny"), small_blocks(64));
  engine.set_kv_event_listener(recorder.listener());
  const Request r = request(ids(13, 3), 4);
  const Output out = engine.generate(r);
  // 13 prompt positions + 3 generated ones computed (the last token never is): 4 full blocks.
  const std::vector<uint64_t> expected = testing::chain_hashes(sequence(r, out), kBlock, 4);
  // The caller may hear of the finished request before its last step's batch is handed over;
  // the cached set is read after it.
  EXPECT_EQ(engine.kv_cached_block_hashes(), sorted(expected));
  const std::vector<KvEvent> events = events_of(recorder.take());
  EXPECT_EQ(stored_chain(events, std::nullopt), expected);
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(events), "");
  EXPECT_EQ(replay.hashes(), sorted(expected));
}

TEST(EngineKvEvents, ASharedPrefixStoresOnlyItsNewBlocks) {
  Recorder recorder;  // outlives the engine, whose shutdown calls the listener a last time
  Engine engine(testing::fixture_dir("llama-tiny"), small_blocks(64));
  engine.set_kv_event_listener(recorder.listener());
  const Request first = request(ids(12, 3), 1);
  engine.generate(first);
  const std::vector<uint64_t> first_chain = testing::chain_hashes(first.prompt_ids, kBlock, 3);
  EXPECT_EQ(engine.kv_cached_block_hashes(), sorted(first_chain));
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(events_of(recorder.take())), "");

  // The first two blocks are shared; the third differs, so it and what follows are new.
  std::vector<int32_t> prompt = ids(8, 3);
  prompt.insert(prompt.end(), {200, 201, 202, 203, 204, 205, 206});
  const Request second = request(prompt, 2);
  const Output out = engine.generate(second);
  EXPECT_EQ(engine.metrics().prefix_cache_hit_tokens, 8u);
  const std::vector<uint64_t> cached = engine.kv_cached_block_hashes();
  const std::vector<KvEvent> events = events_of(recorder.take());
  const std::vector<uint64_t> expected = testing::chain_hashes(sequence(second, out), kBlock, 4);
  EXPECT_EQ(stored_chain(events, first_chain[1]), std::vector<uint64_t>(expected.begin() + 2, expected.end()));
  ASSERT_EQ(replay.apply(events), "");
  EXPECT_EQ(replay.hashes(), cached);
  EXPECT_EQ(cached.size(), 3u + 2u);
}

TEST(EngineKvEvents, EvictionUnderBlockPressureIsPublishedAndReplayRebuildsTheCache) {
  // 12 blocks of 4 for concurrent requests of up to 6 blocks each: prompts from two stems
  // share prefixes while the pool keeps evicting; some requests are preempted. After every
  // batch the replayed set equals what the engine holds (read on the worker, in the listener).
  testing::KvEventReplay replay;  // what the listener uses outlives the engine
  std::string problem;
  int32_t batches = 0, removals = 0;
  EngineConfig config = small_blocks(12);
  config.max_batch_size = 3;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  engine.set_kv_event_listener([&](const KvEventBatch& batch) {
    ++batches;
    for (const KvEvent& event : batch.events) removals += std::holds_alternative<KvBlockRemoved>(event) ? 1 : 0;
    if (problem.empty()) problem = replay.apply(batch.events);
    if (problem.empty() && replay.hashes() != engine.kv_cached_block_hashes()) {
      problem = "the replayed set differs from the engine's after a batch";
    }
  });
  std::vector<StreamHandle> streams;
  for (int32_t i = 0; i < 12; ++i) {
    std::vector<int32_t> prompt = ids(6, i % 2 == 0 ? 10 : 300);
    for (int32_t k = 0; k < 4 + i % 5; ++k) prompt.push_back(50 + (i * 7 + k) % 40);
    streams.push_back(engine.generate_streaming(request(prompt, 8)));
  }
  for (StreamHandle& stream : streams) testing::drain(stream);
  EXPECT_EQ(testing::check_idle(engine), "");
  const std::vector<uint64_t> cached = engine.kv_cached_block_hashes();
  EXPECT_EQ(problem, "");
  EXPECT_GT(removals, 0);
  EXPECT_GT(batches, 1);
  EXPECT_FALSE(cached.empty());
  EXPECT_EQ(replay.hashes(), cached);
}

TEST(EngineKvEvents, ALateListenerFirstGetsTheCachedBlocks) {
  Recorder recorder;
  Engine engine(testing::fixture_dir("llama-tiny"), small_blocks(64));
  engine.generate(request(ids(20, 3), 2));
  engine.generate(request(ids(9, 100), 2));
  engine.set_kv_event_listener(recorder.listener());
  const std::vector<KvEvent> events = events_of(recorder.take());  // handed over before set returned
  const std::vector<uint64_t> cached = engine.kv_cached_block_hashes();
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(events[0]));
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(events), "");
  EXPECT_EQ(replay.hashes(), cached);
  EXPECT_EQ(cached.size(), 5u + 2u);  // 21 and 10 computed positions
}

TEST(EngineKvEvents, AStreamCallbackMaySetTheListenerAndReadTheCache) {
  Recorder recorder;
  Engine engine(testing::fixture_dir("llama-tiny"), small_blocks(64));
  std::promise<size_t> seen_in_callback;
  bool first = true;
  engine.generate_streaming(request(ids(18, 5), 6), [&](const StreamChunk&) {
    if (first) {  // on the worker, after the prefill cached 4 blocks: neither call may wait for it
      first = false;
      engine.set_kv_event_listener(recorder.listener());
      seen_in_callback.set_value(engine.kv_cached_block_hashes().size());
    }
  });
  EXPECT_EQ(seen_in_callback.get_future().get(), 4u);
  EXPECT_EQ(testing::check_idle(engine), "");
  const std::vector<uint64_t> cached = engine.kv_cached_block_hashes();
  testing::KvEventReplay replay;
  ASSERT_EQ(replay.apply(events_of(recorder.take())), "");  // the description, then the decode's block
  EXPECT_EQ(replay.hashes(), cached);
  EXPECT_EQ(cached.size(), 5u);  // 23 computed positions
}

TEST(EngineKvEvents, ShutdownClearsAndEnginesWithoutAListenerWorkAsBefore) {
  const Request r = request(ids(17, 40), 6);
  Engine plain(testing::fixture_dir("llama-tiny"), small_blocks(64));
  const Output expected = plain.generate(r);
  Recorder recorder;
  Engine listened(testing::fixture_dir("llama-tiny"), small_blocks(64));
  listened.set_kv_event_listener(recorder.listener());
  EXPECT_EQ(listened.generate(r).tokens, expected.tokens);
  // Same content, same hashes: they do not depend on the engine instance.
  EXPECT_EQ(listened.kv_cached_block_hashes(), plain.kv_cached_block_hashes());
  EXPECT_EQ(plain.kv_cached_block_hashes().size(), 5u);

  // A listener that throws loses its batches, nothing else.
  listened.set_kv_event_listener([](const KvEventBatch&) { throw std::runtime_error("listener down"); });
  EXPECT_EQ(listened.generate(request(ids(9, 200), 2)).tokens.size(), 2u);
  listened.set_kv_event_listener(recorder.listener());
  EXPECT_FALSE(recorder.take().empty());  // the description of the cache, handed over before set returned

  listened.shutdown();
  const std::vector<KvEventBatch> last = recorder.take();
  ASSERT_EQ(last.size(), 1u);
  ASSERT_EQ(last[0].events.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(last[0].events[0]));
  EXPECT_TRUE(listened.kv_cached_block_hashes().empty());
}

}  // namespace
}  // namespace izwi
