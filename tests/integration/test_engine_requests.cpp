// Request handling: validation errors, stop conditions, sampling reproducibility, metrics.

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/engine_checks.h"
#include "common/reference.h"
#include "engine/engine_impl.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

Request request(std::vector<int32_t> prompt, int32_t max_tokens) {
  Request r;
  r.prompt_ids = std::move(prompt);
  r.params.max_tokens = max_tokens;
  return r;
}

// The error a submission raises, checked to be of `code` and to mention `field`.
void expect_rejected(Engine& engine, const Request& r, ErrorCode code, const std::string& field) {
  try {
    engine.generate(r);
    ADD_FAILURE() << "accepted a request with a bad " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
        << "message '" << e.what() << "' does not name " << field;
  }
}

TEST(EngineRequests, InvalidRequestsAreRejectedWithTheFieldNamed) {
  EngineConfig config;
  config.num_kv_blocks = 20;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  const Request ok = request({1, 2, 3}, 4);
  auto with = [&](const std::function<void(Request&)>& change) {
    Request r = ok;
    change(r);
    return r;
  };
  expect_rejected(engine, with([](Request& r) { r.prompt_ids.clear(); }), ErrorCode::InvalidArgument, "prompt_ids");
  expect_rejected(engine, with([](Request& r) { r.prompt_ids[1] = 512; }), ErrorCode::InvalidArgument, "prompt_ids[1]");
  expect_rejected(engine, with([](Request& r) { r.prompt_ids[0] = -1; }), ErrorCode::InvalidArgument, "prompt_ids[0]");
  expect_rejected(engine, with([](Request& r) { r.params.max_tokens = 0; }), ErrorCode::InvalidArgument, "max_tokens");
  expect_rejected(engine, with([](Request& r) { r.params.min_tokens = 5; }), ErrorCode::InvalidArgument, "min_tokens");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.temperature = -1; }), ErrorCode::InvalidArgument,
                  "temperature");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.temperature = std::nanf(""); }),
                  ErrorCode::InvalidArgument, "temperature");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.top_p = 0; }), ErrorCode::InvalidArgument, "top_p");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.top_p = 1.5f; }), ErrorCode::InvalidArgument,
                  "top_p");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.top_k = -2; }), ErrorCode::InvalidArgument, "top_k");
  expect_rejected(engine, with([](Request& r) { r.params.sampling.repetition_penalty = 0; }),
                  ErrorCode::InvalidArgument, "repetition_penalty");
  expect_rejected(engine, with([](Request& r) {
                    r.params.stop_token_ids = {7, 9999};
                  }),
                  ErrorCode::InvalidArgument, "stop_token_ids[1]");
  expect_rejected(engine, with([](Request& r) { r.params.max_tokens = 510; }), ErrorCode::InvalidArgument,
                  "exceeds the limit of 512 positions");
  expect_rejected(engine, with([](Request& r) { r.params.max_tokens = 400; }), ErrorCode::ResourceExhausted,
                  "num_kv_blocks");
  // Rejections never reach the step loop: the engine still serves requests.
  EXPECT_EQ(engine.generate(ok).tokens.size(), 4u);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineRequests, DuplicateLiveIdsAreRejected) {
  EngineConfig config;
  config.max_batch_size = 1;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  Request r = request({1, 2, 3}, 200);
  r.id = "same";
  StreamHandle first = engine.generate_streaming(r);
  expect_rejected(engine, r, ErrorCode::InvalidArgument, "'same' is already in use");
  first.abort();
  StreamChunk last;
  testing::drain(first, &last);
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_EQ(testing::check_idle(engine), "");
  r.params.max_tokens = 2;
  EXPECT_EQ(engine.generate(r).request_id, "same");  // reusable once finished
}

TEST(EngineRequests, EngineConstructionErrorsNameTheProblem) {
  try {
    Engine engine("/no/such/model");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
    EXPECT_NE(std::string(e.what()).find("/no/such/model"), std::string::npos);
  }
  EngineConfig bad;
  bad.max_seq_len = 100000;
  try {
    Engine engine(testing::fixture_dir("llama-tiny"), bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_seq_len"), std::string::npos);
  }
  bad = EngineConfig{};
  bad.device = "tpu";
  EXPECT_THROW(Engine(testing::fixture_dir("llama-tiny"), bad), Error);
}

/// The intra-op thread count the engine's worker runs its kernels with.
int worker_threads(Engine& engine) {
  int threads = 0;
  detail::EngineImpl::of(engine).run_on_worker([&](EngineCore&) { threads = at::get_num_threads(); });
  return threads;
}

TEST(EngineRequests, DefaultThreadCountFollowsOmpNumThreads) {
  // num_threads = 0 takes OMP_NUM_THREADS when it is a count in [1, 1024], else every core.
  // The caller's value is put back: later tests in this process (a sanitizer run) rely on it.
  const char* before = std::getenv("OMP_NUM_THREADS");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& [value, expected] : std::vector<std::pair<const char*, int>>{
           {"1", 1}, {"3", 3}, {"0", cores}, {"two", cores}, {"5000", cores}, {nullptr, cores}}) {
    if (value != nullptr) {
      ::setenv("OMP_NUM_THREADS", value, 1);
    } else {
      ::unsetenv("OMP_NUM_THREADS");
    }
    Engine engine(testing::fixture_dir("llama-tiny"));
    EXPECT_EQ(worker_threads(engine), expected) << (value ? value : "unset");
  }
  EngineConfig config;
  config.num_threads = 2;
  ::setenv("OMP_NUM_THREADS", "1", 1);
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  EXPECT_EQ(worker_threads(engine), 2);  // an explicit count wins
  if (saved) {
    ::setenv("OMP_NUM_THREADS", saved->c_str(), 1);
  } else {
    ::unsetenv("OMP_NUM_THREADS");
  }
}

TEST(EngineRequests, EosEndsGenerationUnlessMinTokensOrIgnoreEos) {
  // In lfm2-tiny, EOS (id 2) is the raw argmax at one step of one case; the reference
  // suppressed it. Without min_tokens the engine must stop there with reason Eos.
  testing::ReferenceTensors ref("lfm2-tiny");
  Engine engine(testing::fixture_dir("lfm2-tiny"));
  int eos_cases = 0;
  for (int c = 0; c < 7; ++c) {
    const std::string k = "case" + std::to_string(c);
    const at::Tensor step_logits = ref.get(k + ".step_logits");
    const std::vector<int32_t> generated = ref.ids(k + ".generated");
    int eos_step = -1;
    for (int64_t s = 0; s < step_logits.size(0) && eos_step < 0; ++s) {
      if (step_logits[s].argmax().item<int64_t>() == 2) eos_step = static_cast<int>(s);
    }
    if (eos_step < 0) continue;
    ++eos_cases;
    Request r = request(ref.ids(k + ".prompt"), static_cast<int32_t>(generated.size()));
    const Output stopped = engine.generate(r);
    EXPECT_EQ(stopped.finish_reason, FinishReason::Eos);
    ASSERT_EQ(stopped.tokens.size(), static_cast<size_t>(eos_step) + 1);
    EXPECT_EQ(stopped.tokens.back(), 2);
    EXPECT_TRUE(std::equal(generated.begin(), generated.begin() + eos_step, stopped.tokens.begin()));

    r.params.ignore_eos = true;
    const Output ignored = engine.generate(r);
    EXPECT_EQ(ignored.finish_reason, FinishReason::Length);
    EXPECT_EQ(ignored.tokens.size(), generated.size());
    EXPECT_EQ(ignored.tokens[static_cast<size_t>(eos_step)], 2);
  }
  EXPECT_GE(eos_cases, 1) << "the fixture was expected to have an EOS argmax";
}

TEST(EngineRequests, StopTokenIdsEndGeneration) {
  testing::ReferenceTensors ref("llama-tiny");
  Engine engine(testing::fixture_dir("llama-tiny"));
  const std::vector<int32_t> generated = ref.ids("case1.generated");
  Request r = request(ref.ids("case1.prompt"), 24);
  r.params.min_tokens = 0;
  r.params.stop_token_ids = {generated[3]};
  const size_t first =
      static_cast<size_t>(std::find(generated.begin(), generated.end(), generated[3]) - generated.begin());
  const Output out = engine.generate(r);
  EXPECT_EQ(out.finish_reason, FinishReason::Stop);
  EXPECT_EQ(out.tokens.size(), first + 1);
  // With min_tokens the stop id is suppressed until enough tokens exist.
  r.params.min_tokens = static_cast<int32_t>(first) + 2;
  const Output later = engine.generate(r);
  EXPECT_GE(later.tokens.size(), first + 2);
}

TEST(EngineRequests, SeededSamplingIsReproducibleAloneAndInABatch) {
  Engine engine(testing::fixture_dir("qwen3-tiny"));
  Request r = request({5, 6, 7, 8}, 16);
  r.params.sampling = {0.9f, 40, 0.95f, 1.1f};
  r.params.seed = 1234;
  const std::vector<int32_t> alone = engine.generate(r).tokens;
  EXPECT_EQ(engine.generate(r).tokens, alone);
  std::vector<StreamHandle> handles;
  for (int i = 0; i < 5; ++i) {
    Request other = r;
    other.params.seed = 99 + i;
    handles.push_back(engine.generate_streaming(other));
  }
  EXPECT_EQ(engine.generate(r).tokens, alone);
  for (StreamHandle& h : handles) testing::drain(h);
  r.params.seed = 4321;
  EXPECT_NE(engine.generate(r).tokens, alone);
}

TEST(EngineRequests, MetricsCountWhatHappened) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  for (int i = 0; i < 5; ++i) engine.generate(request({1, 2, 3, static_cast<int32_t>(10 + i)}, 6));
  const MetricsSnapshot m = engine.metrics();
  EXPECT_EQ(m.requests_finished, 5u);
  EXPECT_EQ(m.generated_tokens, 30u);
  EXPECT_EQ(m.prompt_tokens, 20u);
  EXPECT_EQ(m.request_latency_ms.count, 5u);
  EXPECT_GT(m.request_latency_ms.p50, 0.0);
  EXPECT_LE(m.request_latency_ms.p50, m.request_latency_ms.p99);
  EXPECT_GT(m.ttft_ms.p90, 0.0);
  EXPECT_GT(m.time_per_output_token_ms.mean, 0.0);
  EXPECT_GT(m.generated_tokens_per_s, 0.0);
  EXPECT_EQ(m.kv_blocks_total, 1024);
  EXPECT_EQ(engine.pending_requests(), 0);
  EXPECT_EQ(engine.running_requests(), 0);
}

}  // namespace
}  // namespace izwi
