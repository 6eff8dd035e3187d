// Greedy generation through the whole engine equals Hugging Face's, one request at a time and
// with every case submitted at once under a small token budget and a KV pool small enough to
// force preemption; shared prompt prefixes are served from the prefix cache.

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "common/engine_checks.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using testing::ReferenceTensors;

struct Case {
  std::vector<int32_t> prompt;
  std::vector<int32_t> generated;
};

std::vector<Case> load_cases(const std::string& fixture) {
  ReferenceTensors ref(fixture);
  std::vector<Case> cases;
  for (int c = 0; ref.contains("case" + std::to_string(c) + ".prompt"); ++c) {
    const std::string k = "case" + std::to_string(c);
    cases.push_back({ref.ids(k + ".prompt"), ref.ids(k + ".generated")});
  }
  return cases;
}

Request greedy_request(const Case& c) {
  Request r;
  r.prompt_ids = c.prompt;
  r.params.max_tokens = static_cast<int32_t>(c.generated.size());
  r.params.min_tokens = r.params.max_tokens;  // the references suppressed EOS throughout
  return r;
}

class EngineParity : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineParity, OneRequestAtATime) {
  const std::vector<Case> cases = load_cases(GetParam());
  Engine engine(testing::fixture_dir(GetParam()), testing::test_engine_config());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Output out = engine.generate(greedy_request(cases[i]));
    EXPECT_EQ(out.tokens, cases[i].generated) << "case " << i;
    EXPECT_EQ(out.finish_reason, FinishReason::Length);
    EXPECT_EQ(testing::check_idle(engine), "");
  }
}

// With a bf16 K/V cache (lossy, so not compared with the reference here: see the parity suite),
// every case run concurrently under chunking and preemption gives what it gives alone: preempted
// sequences recompute the same rounded keys and values.
TEST_P(EngineParity, Bf16KvCacheGivesTheSameTokensConcurrentlyAsAlone) {
  const std::vector<Case> cases = load_cases(GetParam());
  EngineConfig alone_config = testing::test_engine_config();
  alone_config.kv_cache_dtype = "bfloat16";
  std::vector<std::vector<int32_t>> alone;
  {
    Engine engine(testing::fixture_dir(GetParam()), alone_config);
    for (const Case& c : cases) alone.push_back(engine.generate(greedy_request(c)).tokens);
  }
  EngineConfig config = alone_config;
  config.max_tokens_per_step = 24;
  config.num_kv_blocks = 12;
  Engine engine(testing::fixture_dir(GetParam()), config);
  std::vector<StreamHandle> handles;
  for (const Case& c : cases) handles.push_back(engine.generate_streaming(greedy_request(c)));
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(testing::drain(handles[i]), alone[i]) << "case " << i;
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST_P(EngineParity, AllCasesConcurrentlyWithChunkingAndPreemption) {
  const std::vector<Case> cases = load_cases(GetParam());
  for (bool prefix_cache : {false, true}) {
    EngineConfig config = testing::test_engine_config();
    config.max_tokens_per_step = 24;  // long prompts prefill in chunks, mixed with decodes
    config.num_kv_blocks = 12;        // 7 sequences of up to 88 positions cannot all fit
    config.enable_prefix_cache = prefix_cache;
    Engine engine(testing::fixture_dir(GetParam()), config);
    std::vector<StreamHandle> handles;
    for (const Case& c : cases) handles.push_back(engine.generate_streaming(greedy_request(c)));
    for (size_t i = 0; i < cases.size(); ++i) {
      StreamChunk last;
      EXPECT_EQ(testing::drain(handles[i], &last), cases[i].generated)
          << "case " << i << " prefix cache " << prefix_cache;
      EXPECT_EQ(last.finish_reason, FinishReason::Length);
    }
    if (cases.size() > 3) EXPECT_GT(engine.metrics().preemptions, 0u) << "the pool was meant to force preemption";
    EXPECT_EQ(testing::check_idle(engine), "");
  }
}

TEST_P(EngineParity, SharedPrefixIsServedFromTheCache) {
  const std::vector<Case> cases = load_cases(GetParam());
  if (cases.size() < 7) GTEST_SKIP() << "no shared-prefix cases";
  Engine engine(testing::fixture_dir(GetParam()), testing::test_engine_config());
  const Output first = engine.generate(greedy_request(cases[5]));
  const Output second = engine.generate(greedy_request(cases[6]));
  EXPECT_EQ(first.tokens, cases[5].generated);
  EXPECT_EQ(first.prefix_cache_hit_tokens, 0);
  EXPECT_EQ(second.tokens, cases[6].generated);
  EXPECT_GE(second.prefix_cache_hit_tokens, 32);
  EXPECT_GT(engine.metrics().prefix_cache_hit_rate, 0.0);
  EXPECT_EQ(testing::check_idle(engine), "");
}

// On a GPU (IZWI_TEST_DEVICE=cuda) decode steps replay CUDA graphs that run the output head too
// (executor/cuda_decode_graphs.h); batches of 1 to 7 requests are padded to buckets of 1 to 8.
// Graphs on and off give the same greedy tokens, logprobs and prompt logprobs. On the CPU, which has
// no graphs, both runs take the same path and this checks the logprobs' head alone.
void expect_same_logprobs(const std::vector<TokenLogprob>& got, const std::vector<TokenLogprob>& want,
                          const std::string& what) {
  constexpr float kTolerance = 1e-3f;  // graph and eager GEMMs may sum in another order
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].id, want[k].id) << what << " " << k;
    EXPECT_NEAR(got[k].logprob, want[k].logprob, kTolerance) << what << " " << k;
    ASSERT_EQ(got[k].top.size(), want[k].top.size()) << what << " " << k;
    for (size_t j = 0; j < got[k].top.size(); ++j) {
      EXPECT_NEAR(got[k].top[j].second, want[k].top[j].second, kTolerance) << what << " " << k << " top " << j;
      // Alternatives within the tolerance of a neighbour may come in either order.
      const float value = want[k].top[j].second;
      const bool tied = (j > 0 && value > want[k].top[j - 1].second - kTolerance) ||
                        (j + 1 < want[k].top.size() && value < want[k].top[j + 1].second + kTolerance);
      if (!tied) EXPECT_EQ(got[k].top[j].first, want[k].top[j].first) << what << " " << k << " top " << j;
    }
  }
}

TEST_P(EngineParity, CudaGraphsOnAndOffGiveTheSameTokensAndLogprobs) {
  const std::vector<Case> cases = load_cases(GetParam());
  std::vector<Request> requests;
  for (const Case& c : cases) {
    Request r = greedy_request(c);
    r.params.logprobs = 3;
    requests.push_back(r);
  }
  requests.front().params.prompt_logprobs = 2;
  const auto run = [&](bool graphs, size_t count) {
    EngineConfig config = testing::test_engine_config();
    config.use_cuda_graphs = graphs;
    Engine engine(testing::fixture_dir(GetParam()), config);
    std::vector<std::future<Output>> futures;
    for (size_t i = 0; i < count; ++i) {
      futures.push_back(
          std::async(std::launch::async, [&engine, &requests, i] { return engine.generate(requests[i]); }));
    }
    std::vector<Output> outputs;
    for (std::future<Output>& f : futures) outputs.push_back(f.get());
    EXPECT_EQ(testing::check_idle(engine), "");
    return outputs;
  };
  for (size_t count : {size_t{1}, std::min<size_t>(3, cases.size()), cases.size()}) {
    const std::vector<Output> on = run(true, count), off = run(false, count);
    for (size_t i = 0; i < count; ++i) {
      const std::string what = "case " + std::to_string(i) + " of " + std::to_string(count);
      EXPECT_EQ(on[i].tokens, off[i].tokens) << what;
      EXPECT_EQ(on[i].tokens, cases[i].generated) << what;
      expect_same_logprobs(on[i].logprobs, off[i].logprobs, what + " logprobs");
      expect_same_logprobs(on[i].prompt_logprobs, off[i].prompt_logprobs, what + " prompt logprobs");
      EXPECT_EQ(on[i].logprobs.size(), on[i].tokens.size()) << what;
    }
    ASSERT_FALSE(on[0].prompt_logprobs.empty());
  }
}

// In bf16 (how a GPU serves), graphs and eager steps may round differently where they sum in
// another order (the graph's split-K plan follows its bucketed block tables), so greedy tokens may
// part at a near-tie: until the first position where they part, whose margin must be a near-tie,
// each token's logprob agrees within kBf16Tolerance. A graph that replays the capture batch's
// per-sequence state instead of the step's (an LFM2 short conv on a host loop) misses by far more
// at the first decode step. One request at a time: no padding rows.
TEST_P(EngineParity, CudaGraphsOnAndOffAgreeInBf16) {
  constexpr float kBf16Tolerance = 0.05f;
  const std::vector<Case> cases = load_cases(GetParam());
  const auto run = [&](bool graphs) {
    EngineConfig config = testing::test_engine_config();
    config.dtype = "bfloat16";
    config.use_cuda_graphs = graphs;
    Engine engine(testing::fixture_dir(GetParam()), config);
    std::vector<Output> outputs;
    for (const Case& c : cases) {
      Request r = greedy_request(c);
      r.params.logprobs = 2;
      outputs.push_back(engine.generate(r));
    }
    EXPECT_EQ(testing::check_idle(engine), "");
    return outputs;
  };
  const std::vector<Output> on = run(true), off = run(false);
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(on[i].logprobs.size(), off[i].logprobs.size()) << "case " << i;
    for (size_t k = 0; k < on[i].logprobs.size(); ++k) {
      const TokenLogprob &a = on[i].logprobs[k], &b = off[i].logprobs[k];
      if (a.id != b.id) {
        ASSERT_EQ(b.top.size(), 2u);
        EXPECT_LT(b.top[0].second - b.top[1].second, kBf16Tolerance) << "case " << i << " parts at " << k;
        break;
      }
      EXPECT_NEAR(a.logprob, b.logprob, kBf16Tolerance) << "case " << i << " token " << k;
    }
  }
}

// The bf16 fixture's weights are exactly representable in bf16, so keeping them bf16 in memory
// (converted inside the CPU kernels) must reproduce its reference tokens exactly: with float32
// arithmetic (integration.cpu_kernels_avx512_engine_parity) and with the bf16 dot products that
// are the default where the CPU has avx512_bf16.
TEST(EngineParityBf16Storage, Bf16WeightStorageOfABf16CheckpointIsLossless) {
  const std::vector<Case> cases = load_cases("llama-tiny-bf16-sharded");
  EngineConfig config = testing::test_engine_config();
  config.weight_dtype = "bfloat16";
  Engine engine(testing::fixture_dir("llama-tiny-bf16-sharded"), config);
  EngineConfig widened = testing::test_engine_config();
  widened.weight_dtype = "float32";
  EXPECT_EQ(engine.model_info().decode_weight_bytes * 2,
            Engine(testing::fixture_dir("llama-tiny-bf16-sharded"), widened).model_info().decode_weight_bytes);
  // "auto" keeps the checkpoint's bf16 (docs/quantization.md, "bf16 stays bf16").
  EXPECT_EQ(engine.model_info().decode_weight_bytes,
            Engine(testing::fixture_dir("llama-tiny-bf16-sharded"), testing::test_engine_config())
                .model_info()
                .decode_weight_bytes);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(engine.generate(greedy_request(cases[i])).tokens, cases[i].generated);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EngineParity,
                         ::testing::Values("llama-tiny", "llama-tiny-bf16-sharded", "qwen3-tiny", "lfm2-tiny"),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

}  // namespace
}  // namespace izwi
