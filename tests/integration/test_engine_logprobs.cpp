// GenerationParams::logprobs and prompt_logprobs: the values are the log-softmax of the model's
// logits before any sampling processor, for the prompt (teacher-forced, against the fixtures'
// reference logits) and for the generated tokens (against the engine's own logits), whole and
// streamed; max_tokens 0 scores the prompt alone.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/engine_checks.h"
#include "common/model_runner.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using testing::ReferenceTensors;

// The parity tests' logit tolerance (test_text_model_parity.cpp); a log-softmax of logits each
// within it is within twice it (the shift by the log-sum-exp moves at most as much as the logits).
constexpr double kLogitTolerance = 1e-4;
constexpr double kReferenceLogprobTolerance = 2 * kLogitTolerance;
// The engine's own logits through the same kernels: only the summation order differs.
constexpr double kOwnLogprobTolerance = 1e-4;

std::vector<float> log_softmax_row(const at::Tensor& logits, int64_t row) {
  const at::Tensor lp = at::log_softmax(logits[row].to(at::kFloat), 0).contiguous();
  return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
}

// Sorted descending, the chosen id's value where it is listed, probabilities summing to <= 1.
void expect_well_formed(const TokenLogprob& t, size_t n, const std::string& where) {
  ASSERT_EQ(t.top.size(), n) << where;
  double mass = 0;
  for (size_t j = 0; j < t.top.size(); ++j) {
    if (j > 0) EXPECT_GE(t.top[j - 1].second, t.top[j].second) << where;
    if (t.top[j].first == t.id) EXPECT_EQ(t.top[j].second, t.logprob) << where;
    mass += std::exp(static_cast<double>(t.top[j].second));
  }
  EXPECT_LE(mass, 1.0 + 1e-6) << where;
  EXPECT_LE(t.logprob, 0.0f) << where;
}

class EngineLogprobs : public ::testing::TestWithParam<const char*> {
 protected:
  std::string fixture() const { return GetParam(); }
};

// Echo scoring: max_tokens 0 generates nothing and returns every prompt token's logprob but the
// first, equal to the reference's teacher-forced log-softmax, with prefill in chunks of 5 and with
// the prompt already in the prefix cache (the request bypasses it).
TEST_P(EngineLogprobs, PromptLogprobsEqualTheReferenceTeacherForcedLogSoftmax) {
  ReferenceTensors ref(fixture());
  EngineConfig config;
  config.max_batch_size = 4;
  config.max_tokens_per_step = 5;
  Engine engine(testing::fixture_dir(fixture()), config);
  for (int c = 0; c < 3; ++c) {
    const std::string key = "case" + std::to_string(c);
    if (!ref.contains(key + ".teacher_forced_logits")) GTEST_SKIP() << "fixture has no teacher-forced logits";
    const at::Tensor want = ref.get(key + ".teacher_forced_logits");
    Request request;
    request.prompt_ids = ref.ids(key + ".prompt");
    request.params.max_tokens = 0;
    request.params.prompt_logprobs = 3;
    for (int run = 0; run < 2; ++run) {
      const Output out = engine.generate(request);
      EXPECT_EQ(out.finish_reason, FinishReason::Length);
      EXPECT_TRUE(out.tokens.empty());
      EXPECT_EQ(out.prefix_cache_hit_tokens, 0);
      ASSERT_EQ(out.prompt_logprobs.size(), request.prompt_ids.size() - 1) << key;
      for (size_t i = 1; i < request.prompt_ids.size(); ++i) {
        const TokenLogprob& t = out.prompt_logprobs[i - 1];
        const std::vector<float> lp = log_softmax_row(want, static_cast<int64_t>(i) - 1);
        const std::string where = key + " prompt token " + std::to_string(i);
        EXPECT_EQ(t.id, request.prompt_ids[i]) << where;
        EXPECT_NEAR(t.logprob, lp[static_cast<size_t>(t.id)], kReferenceLogprobTolerance) << where;
        expect_well_formed(t, 3, where);
        for (const auto& [id, value] : t.top)
          EXPECT_NEAR(value, lp[static_cast<size_t>(id)], kReferenceLogprobTolerance);
      }
    }
    // Another request with the same prompt and no logprobs still gets the cache's blocks.
    Request plain;
    plain.prompt_ids = request.prompt_ids;
    plain.params.max_tokens = 1;
    EXPECT_TRUE(engine.generate(plain).prompt_logprobs.empty());
  }
}

// Generated tokens: greedy decoding gives the reference's tokens, each token the top-1 of its
// list, and the values equal the log-softmax of the engine's own teacher-forced logits.
TEST_P(EngineLogprobs, GeneratedLogprobsEqualTheEnginesLogSoftmax) {
  ReferenceTensors ref(fixture());
  Engine engine(testing::fixture_dir(fixture()));
  testing::ModelRunner runner(fixture(), /*fast_kernels=*/true);
  Request request;
  request.prompt_ids = ref.ids("case0.prompt");
  const std::vector<int32_t> expected = ref.ids("case0.generated");
  request.params.max_tokens = static_cast<int32_t>(expected.size());
  request.params.min_tokens = request.params.max_tokens;
  request.params.sampling.temperature = 0.0f;
  request.params.logprobs = 5;
  const Output out = engine.generate(request);
  ASSERT_EQ(out.tokens, expected);
  ASSERT_EQ(out.logprobs.size(), out.tokens.size());
  EXPECT_TRUE(out.prompt_logprobs.empty());
  std::vector<int32_t> all = request.prompt_ids;
  all.insert(all.end(), expected.begin(), expected.end());
  const at::Tensor logits = testing::teacher_forced_logits(runner, all);
  const std::vector<int32_t> eos = runner.spec().eos_token_ids;
  for (size_t k = 0; k < out.tokens.size(); ++k) {
    const TokenLogprob& t = out.logprobs[k];
    const std::string where = "token " + std::to_string(k);
    const std::vector<float> lp = log_softmax_row(logits, static_cast<int64_t>(request.prompt_ids.size() + k) - 1);
    EXPECT_EQ(t.id, out.tokens[k]) << where;
    EXPECT_NEAR(t.logprob, lp[static_cast<size_t>(t.id)], kOwnLogprobTolerance) << where;
    expect_well_formed(t, 5, where);
    for (const auto& [id, value] : t.top) EXPECT_NEAR(value, lp[static_cast<size_t>(id)], kOwnLogprobTolerance);
    // min_tokens masks EOS for the draw, not for the logprobs: the greedy token is the top-1
    // among the ids the draw could take.
    for (const auto& [id, value] : t.top) {
      if (std::find(eos.begin(), eos.end(), id) != eos.end()) continue;
      EXPECT_EQ(id, t.id) << where;
      break;
    }
  }
}

// Sampling at a temperature with top-k and top-p: the logprobs are still those of the raw logits
// of the tokens drawn, and a stream carries the same values as the whole output.
TEST_P(EngineLogprobs, SampledAndStreamedLogprobsIgnoreTheSamplingProcessors) {
  ReferenceTensors ref(fixture());
  Engine engine(testing::fixture_dir(fixture()));
  testing::ModelRunner runner(fixture(), /*fast_kernels=*/true);
  Request request;
  request.prompt_ids = ref.ids("case1.prompt");
  request.params.max_tokens = 12;
  request.params.ignore_eos = true;
  request.params.sampling.temperature = 1.7f;
  request.params.sampling.top_k = 4;
  request.params.sampling.top_p = 0.9f;
  request.params.sampling.repetition_penalty = 1.3f;
  request.params.seed = 11;
  request.params.logprobs = 2;
  request.params.prompt_logprobs = 0;
  const Output whole = engine.generate(request);
  ASSERT_EQ(whole.logprobs.size(), whole.tokens.size());
  ASSERT_EQ(whole.prompt_logprobs.size(), request.prompt_ids.size() - 1);
  std::vector<int32_t> all = request.prompt_ids;
  all.insert(all.end(), whole.tokens.begin(), whole.tokens.end());
  const at::Tensor logits = testing::teacher_forced_logits(runner, all);
  for (size_t p = 1; p < all.size(); ++p) {
    const bool prompt = p < request.prompt_ids.size();
    const TokenLogprob& t = prompt ? whole.prompt_logprobs[p - 1] : whole.logprobs[p - request.prompt_ids.size()];
    EXPECT_EQ(t.id, all[p]);
    EXPECT_TRUE(t.top.size() == (prompt ? 0u : 2u)) << "position " << p;
    EXPECT_NEAR(t.logprob, log_softmax_row(logits, static_cast<int64_t>(p) - 1)[static_cast<size_t>(t.id)],
                kOwnLogprobTolerance)
        << "position " << p;
  }

  StreamHandle stream = engine.generate_streaming(request);
  std::vector<int32_t> tokens;
  std::vector<TokenLogprob> logprobs, prompt_logprobs;
  int prompt_chunks = 0;
  while (std::optional<StreamChunk> chunk = stream.next()) {
    EXPECT_EQ(chunk->logprobs.size(), chunk->tokens.size());
    tokens.insert(tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
    logprobs.insert(logprobs.end(), chunk->logprobs.begin(), chunk->logprobs.end());
    if (!chunk->prompt_logprobs.empty()) ++prompt_chunks;
    prompt_logprobs.insert(prompt_logprobs.end(), chunk->prompt_logprobs.begin(), chunk->prompt_logprobs.end());
  }
  EXPECT_EQ(prompt_chunks, 1);
  ASSERT_EQ(tokens, whole.tokens);
  ASSERT_EQ(logprobs.size(), whole.logprobs.size());
  for (size_t k = 0; k < logprobs.size(); ++k) {
    EXPECT_EQ(logprobs[k].logprob, whole.logprobs[k].logprob);
    EXPECT_EQ(logprobs[k].top, whole.logprobs[k].top);
  }
  ASSERT_EQ(prompt_logprobs.size(), whole.prompt_logprobs.size());
  for (size_t k = 0; k < prompt_logprobs.size(); ++k)
    EXPECT_EQ(prompt_logprobs[k].logprob, whole.prompt_logprobs[k].logprob);
}

// Every case at once, prefilled in chunks and preempted (recomputed) on a pool too small for all:
// each prompt position is scored once, and every value is what the request gives alone.
TEST_P(EngineLogprobs, ConcurrentPreemptedRequestsScoreAsAlone) {
  ReferenceTensors ref(fixture());
  std::vector<Request> requests;
  for (int c = 0; c < 7; ++c) {
    Request r;
    r.prompt_ids = ref.ids("case" + std::to_string(c) + ".prompt");
    r.params.max_tokens = static_cast<int32_t>(ref.ids("case" + std::to_string(c) + ".generated").size());
    r.params.min_tokens = r.params.max_tokens;
    r.params.sampling.temperature = 0.0f;
    r.params.logprobs = 2;
    r.params.prompt_logprobs = 2;
    requests.push_back(r);
  }
  std::vector<Output> alone;
  {
    Engine engine(testing::fixture_dir(fixture()), testing::test_engine_config());
    for (const Request& r : requests) alone.push_back(engine.generate(r));
  }
  EngineConfig config = testing::test_engine_config();
  config.max_tokens_per_step = 24;
  config.num_kv_blocks = 12;  // 7 sequences of up to 88 positions cannot all fit
  Engine engine(testing::fixture_dir(fixture()), config);
  std::vector<StreamHandle> handles;
  for (const Request& r : requests) handles.push_back(engine.generate_streaming(r));
  for (size_t i = 0; i < requests.size(); ++i) {
    std::vector<TokenLogprob> logprobs, prompt_logprobs;
    while (std::optional<StreamChunk> chunk = handles[i].next()) {
      logprobs.insert(logprobs.end(), chunk->logprobs.begin(), chunk->logprobs.end());
      prompt_logprobs.insert(prompt_logprobs.end(), chunk->prompt_logprobs.begin(), chunk->prompt_logprobs.end());
    }
    const auto expect_same = [&](const std::vector<TokenLogprob>& got, const std::vector<TokenLogprob>& want,
                                 const char* what) {
      ASSERT_EQ(got.size(), want.size()) << what << " of case " << i;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].id, want[k].id) << what << " of case " << i << " at " << k;
        EXPECT_NEAR(got[k].logprob, want[k].logprob, kOwnLogprobTolerance) << what << " of case " << i << " at " << k;
      }
    };
    expect_same(prompt_logprobs, alone[i].prompt_logprobs, "prompt logprobs");
    expect_same(logprobs, alone[i].logprobs, "logprobs");
    EXPECT_EQ(prompt_logprobs.size(), requests[i].prompt_ids.size() - 1);
  }
  EXPECT_GT(engine.metrics().preemptions, 0u) << "the pool was meant to force preemption";
  EXPECT_EQ(testing::check_idle(engine), "");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EngineLogprobs, ::testing::Values("llama-tiny", "qwen3-tiny"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return testing::fixture_test_name(info.param);
                         });

std::string error_of(Engine& engine, const Request& request) {
  try {
    engine.generate(request);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    return e.what();
  }
  return "";
}

TEST(EngineLogprobsLimits, OutOfRangeCountsAndMaxTokensZeroWithoutPromptLogprobsAreRefused) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  Request request;
  request.prompt_ids = {1, 2, 3};
  request.params.max_tokens = 2;
  request.params.logprobs = kMaxLogprobs + 1;
  EXPECT_NE(error_of(engine, request).find("GenerationParams.logprobs = 21"), std::string::npos);
  request.params.logprobs = -1;
  EXPECT_NE(error_of(engine, request).find("GenerationParams.logprobs"), std::string::npos);
  request.params.logprobs = kMaxLogprobs;
  request.params.prompt_logprobs = 21;
  EXPECT_NE(error_of(engine, request).find("GenerationParams.prompt_logprobs"), std::string::npos);
  request.params.prompt_logprobs.reset();
  request.params.max_tokens = 0;
  EXPECT_NE(error_of(engine, request).find("max_tokens"), std::string::npos);
  // kMaxLogprobs alternatives are served; a one-token prompt has no prompt logprobs to score.
  request.params.max_tokens = 1;
  request.params.prompt_logprobs = 0;
  request.prompt_ids = {5};
  const Output out = engine.generate(request);
  EXPECT_TRUE(out.prompt_logprobs.empty());
  ASSERT_EQ(out.logprobs.size(), 1u);
  EXPECT_EQ(out.logprobs[0].top.size(), static_cast<size_t>(kMaxLogprobs));
}

}  // namespace
}  // namespace izwi
