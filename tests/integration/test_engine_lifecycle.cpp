// Request lifecycles: aborts in every state, shutdown, dropped handles, failing callbacks, and
// a random mix of 1,000 operations. After each, the engine must be idle with nothing leaked.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "common/engine_checks.h"
#include "common/reference.h"
#include "engine/engine_impl.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using detail::EngineImpl;

Request request(int32_t prompt_len, int32_t max_tokens, const std::string& id = "") {
  Request r;
  r.id = id;
  for (int32_t i = 0; i < prompt_len; ++i) r.prompt_ids.push_back(3 + (i * 7) % 500);
  r.params.max_tokens = max_tokens;
  r.params.min_tokens = max_tokens;
  return r;
}

// Submits the request `submit` makes (its id is `id`) and aborts it on the worker thread at the
// first step boundary where `ready(seq)` holds. The watcher is in place before the request is
// submitted: a tiny model can finish a request in a few milliseconds, before a test thread that
// submitted first got round to watching it.
StreamHandle abort_when(Engine& engine, const std::string& id, const std::function<StreamHandle()>& submit,
                        const std::function<bool(const Sequence&)>& ready) {
  std::promise<void> installed;
  bool signalled = false, seen = false, finished_first = false;
  std::future<void> watcher = std::async(std::launch::async, [&] {
    EngineImpl::of(engine).run_on_worker_until([&](EngineCore& core) {
      if (!signalled) {
        signalled = true;
        installed.set_value();
      }
      const ActiveRequest* r = core.find(id);
      if (r == nullptr) {
        finished_first = seen;  // gone after being seen: it ended first; never seen: not queued yet
        return seen;
      }
      seen = true;
      if (!ready(r->seq)) return false;
      core.abort(id);
      return true;
    });
  });
  installed.get_future().wait();
  StreamHandle handle = submit();
  watcher.get();
  EXPECT_FALSE(finished_first) << "request " << id << " finished before reaching the state";
  return handle;
}

TEST(EngineLifecycle, AbortWhileWaiting) {
  EngineConfig config;
  config.max_batch_size = 1;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  StreamHandle busy = engine.generate_streaming(request(8, 300));
  StreamHandle waiting = abort_when(
      engine, "waiting", [&] { return engine.generate_streaming(request(8, 10, "waiting")); },
      [](const Sequence& s) { return s.status == SequenceStatus::Waiting; });
  StreamChunk last;
  EXPECT_TRUE(testing::drain(waiting, &last).empty());
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  busy.abort();
  testing::drain(busy);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineLifecycle, AbortInTheMiddleOfAChunkedPrefill) {
  EngineConfig config;
  config.max_batch_size = 1;
  config.max_tokens_per_step = 4;  // a 60-token prompt takes 15 steps to prefill
  Engine engine(testing::fixture_dir("lfm2-tiny"), config);
  StreamHandle h = abort_when(
      engine, "prefill", [&] { return engine.generate_streaming(request(60, 5, "prefill")); },
      [](const Sequence& s) { return s.num_computed >= 16 && s.num_computed < 60; });
  StreamChunk last;
  EXPECT_TRUE(testing::drain(h, &last).empty());
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_EQ(testing::check_idle(engine), "");
  // The aborted prefill left its completed blocks in the prefix cache; a later request that
  // hits them must still be exact (it matches a fresh engine's output).
  const Output hit = engine.generate(request(60, 8));
  EXPECT_GE(hit.prefix_cache_hit_tokens, 16);
  Engine fresh(testing::fixture_dir("lfm2-tiny"));
  EXPECT_EQ(hit.tokens, fresh.generate(request(60, 8)).tokens);
}

TEST(EngineLifecycle, AbortDuringDecodeKeepsTheTokensSoFar) {
  Engine engine(testing::fixture_dir("qwen3-tiny"));
  StreamHandle h = abort_when(
      engine, "decode", [&] { return engine.generate_streaming(request(6, 400, "decode")); },
      [](const Sequence& s) { return s.num_generated() >= 3; });
  StreamChunk last;
  const std::vector<int32_t> tokens = testing::drain(h, &last);
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_GE(tokens.size(), 3u);
  EXPECT_LT(tokens.size(), 400u);
  EXPECT_FALSE(engine.abort("decode"));  // no longer live
  EXPECT_FALSE(engine.abort("never-existed"));
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineLifecycle, AbortingTwiceIsHarmless) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  StreamHandle h = engine.generate_streaming(request(6, 400, "twice"));
  engine.abort("twice");
  engine.abort("twice");
  h.abort();
  StreamChunk last;
  testing::drain(h, &last);
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineLifecycle, ShutdownResolvesEveryInFlightRequestAsAborted) {
  EngineConfig config;
  config.max_batch_size = 2;
  auto engine = std::make_unique<Engine>(testing::fixture_dir("llama-tiny"), config);
  std::vector<StreamHandle> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(engine->generate_streaming(request(10, 450)));
  std::future<Output> blocked = std::async(std::launch::async, [&] { return engine->generate(request(10, 450)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  engine->shutdown();
  EXPECT_EQ(blocked.get().finish_reason, FinishReason::Abort);
  for (StreamHandle& s : streams) {
    StreamChunk last;
    testing::drain(s, &last);
    EXPECT_TRUE(last.finished);
    EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  }
  try {
    engine->generate(request(3, 2));
    FAIL() << "accepted work after shutdown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Aborted);
  }
  engine->shutdown();  // idempotent
  engine.reset();      // streams outlive the engine safely
  for (StreamHandle& s : streams) s.abort();
}

TEST(EngineLifecycle, DroppingAStreamHandleAbortsItsRequest) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  {
    StreamHandle h = engine.generate_streaming(request(6, 450));
    ASSERT_TRUE(h.next().has_value());
  }
  EXPECT_EQ(testing::check_idle(engine), "");
  EXPECT_EQ(engine.metrics().requests_aborted, 1u);
}

TEST(EngineLifecycle, CallbackStreamsDeliverEveryTokenAndSurviveThrowingCallbacks) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  std::promise<void> done;
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::None;
  engine.generate_streaming(request(5, 12), [&](const StreamChunk& chunk) {
    tokens.insert(tokens.end(), chunk.tokens.begin(), chunk.tokens.end());
    if (chunk.finished) {
      reason = chunk.finish_reason;
      done.set_value();
    }
  });
  done.get_future().wait();
  EXPECT_EQ(tokens, engine.generate(request(5, 12)).tokens);
  EXPECT_EQ(reason, FinishReason::Length);

  std::atomic<int> calls{0};
  engine.generate_streaming(request(5, 300), [&](const StreamChunk&) {
    ++calls;
    throw std::runtime_error("consumer bug");
  });
  EXPECT_EQ(testing::check_idle(engine), "");
  EXPECT_GE(calls.load(), 1);
  EXPECT_EQ(engine.generate(request(5, 3)).tokens.size(), 3u);  // the engine lives on
}

// 1,000 random operations from several threads: blocking generates, streams read partially
// and dropped, aborts of live ids, sampling with seeds, on a pool small enough to preempt.
TEST(EngineLifecycle, ThousandRandomOperationsLeakNothing) {
  EngineConfig config;
  config.num_kv_blocks = 8;  // one long request needs up to 5 of them
  config.max_tokens_per_step = 32;
  Engine engine(testing::fixture_dir("lfm2-tiny"), config);
  constexpr int kThreads = 4, kOpsPerThread = 250;
  std::atomic<int> completed{0};
  std::atomic<uint64_t> submitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t) * 7919u);
      std::vector<std::string> my_ids;
      for (int op = 0; op < kOpsPerThread; ++op) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(op);
        Request r = request(1 + static_cast<int32_t>(rng() % 60), 1 + static_cast<int32_t>(rng() % 16), id);
        r.params.min_tokens = 0;
        if (rng() % 2 == 0) {
          r.params.sampling.temperature = 0.8f;
          r.params.seed = rng();
        }
        r.priority = static_cast<int32_t>(rng() % 3);
        const unsigned kind = rng() % 4;
        if (kind != 3) ++submitted;
        switch (kind) {
          case 0: {
            const Output out = engine.generate(r);
            EXPECT_NE(out.finish_reason, FinishReason::None);
            break;
          }
          case 1: {
            StreamHandle h = engine.generate_streaming(r);
            for (unsigned k = rng() % 3; k > 0; --k) {
              if (!h.next()) break;
            }
            break;  // dropped: aborts if unfinished
          }
          case 2: {
            my_ids.push_back(id);
            engine.generate_streaming(r, [](const StreamChunk&) {});
            break;
          }
          default:
            if (!my_ids.empty()) engine.abort(my_ids[rng() % my_ids.size()]);
            break;
        }
        ++completed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(completed.load(), kThreads * kOpsPerThread);
  EXPECT_EQ(testing::check_idle(engine), "");
  const MetricsSnapshot m = engine.metrics();
  EXPECT_EQ(m.requests_failed, 0u);
  EXPECT_EQ(m.requests_finished + m.requests_aborted, submitted.load());
  EXPECT_GT(m.preemptions, 0u);
}

}  // namespace
}  // namespace izwi
