// The host side of a speech model's per-frame chain as a CUDA graph (executor/frame_chain_graphs.h,
// sampling/device_sampler.h): which frames replay, the controls of all of a frame's draws staged at
// once (the draw indices the eager chain would use, one call per step), the padding rows, and the
// frame's ids back, and the eager frame when a capture fails. The capture and replay themselves
// run only on a GPU (tests/cuda/test_frame_chain_graphs_cuda.cpp).

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "executor/frame_chain_graphs.h"
#include "executor/graph_capture_failed.h"
#include "izwi/errors.h"
#include "kernels/backend.h"
#include "sampling/device_sampler.h"
#include "sampling/token_constraint.h"

namespace izwi {
namespace {

SamplingState seeded(float temperature, int32_t top_k, float top_p, uint64_t seed, uint64_t draws) {
  SamplingState s;
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.reseed(seed);
  s.draws = draws;
  s.min_tokens = 3;
  s.num_generated = 5;
  return s;
}

void expect_same(const SamplingParamsCuda& a, const SamplingParamsCuda& b, const std::string& where) {
  EXPECT_EQ(a.temperature, b.temperature) << where;
  EXPECT_EQ(a.top_k, b.top_k) << where;
  EXPECT_EQ(a.top_p, b.top_p) << where;
  EXPECT_EQ(a.repetition_penalty, b.repetition_penalty) << where;
  EXPECT_EQ(a.min_tokens, b.min_tokens) << where;
  EXPECT_EQ(a.num_generated, b.num_generated) << where;
  EXPECT_EQ(a.seed, b.seed) << where;
  EXPECT_EQ(a.draw, b.draw) << where;
  EXPECT_EQ(a.history_length, 0) << where;
  EXPECT_EQ(a.suppressed_length, 0) << where;
  EXPECT_EQ(a.below_min_length, 0) << where;
}

struct AnyId final : TokenConstraint {
  int64_t bitmask_words() const override { return 1; }
  void fill_bitmask(uint32_t* words) override { words[0] = ~0u; }
  bool accept(int32_t) override { return true; }
  bool must_end() const override { return false; }
};

TEST(FrameChainControls, EachStepDrawsAtTheIndexTheEagerChainsCallWouldUse) {
  SamplingState a = seeded(0.9f, 50, 0.8f, 11, 7), b = seeded(0.0f, 0, 1.0f, 12, 0),
                c = seeded(1.3f, 0, 0.95f, 13, 300);
  const std::vector<SamplingState*> states = {&a, &b, &c};
  const int32_t steps = 5, bucket = 4;
  const std::vector<SamplingParamsCuda> staged = chain_sampling_controls(states, steps, bucket);
  ASSERT_EQ(staged.size(), static_cast<size_t>(steps * bucket));
  EXPECT_EQ(a.draws, 7u) << "staging advances no state";
  // The eager chain: one DeviceSampler::sample per step, each reading the state's controls and
  // then advancing its draw index by one.
  for (int32_t j = 0; j < steps; ++j) {
    for (size_t r = 0; r < states.size(); ++r) {
      expect_same(staged[static_cast<size_t>(j * bucket) + r], device_sampling_controls(*states[r]),
                  "step " + std::to_string(j) + ", row " + std::to_string(r));
    }
    for (SamplingState* s : states) ++s->draws;
  }
  EXPECT_EQ(staged[static_cast<size_t>(2 * bucket)].draw, 9u);
  EXPECT_EQ(staged[static_cast<size_t>(4 * bucket + 2)].draw, 304u);
  EXPECT_EQ(staged[static_cast<size_t>(4 * bucket + 2)].seed, 13u);
  // The padding row of every step: a greedy draw with no list, whatever its logits.
  for (int32_t j = 0; j < steps; ++j) {
    expect_same(staged[static_cast<size_t>(j * bucket + 3)], SamplingParamsCuda{},
                "padding, step " + std::to_string(j));
    EXPECT_EQ(staged[static_cast<size_t>(j * bucket + 3)].temperature, 0.0f);
  }
}

TEST(FrameChainControls, RowsMustFitTheBucket) {
  SamplingState a, b;
  EXPECT_THROW(chain_sampling_controls({&a, &b}, 3, 1), Error);
  EXPECT_EQ(chain_sampling_controls({}, 3, 2).size(), 6u);
}

TEST(FrameChainControls, ControlsCarryTheStateAndAnEndingConstraintLiftsMinTokens) {
  SamplingState s = seeded(0.7f, 20, 0.9f, 5, 41);
  s.repetition_penalty = 1.2f;
  const SamplingParamsCuda p = device_sampling_controls(s);
  EXPECT_EQ(p.temperature, 0.7f);
  EXPECT_EQ(p.top_k, 20);
  EXPECT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.repetition_penalty, 1.2f);
  EXPECT_EQ(p.min_tokens, 3);
  EXPECT_EQ(p.num_generated, 5);
  EXPECT_EQ(p.seed, 5u);
  EXPECT_EQ(p.draw, 41u);
  struct Ended final : TokenConstraint {
    int64_t bitmask_words() const override { return 1; }
    void fill_bitmask(uint32_t* words) override { words[0] = 1; }
    bool accept(int32_t) override { return true; }
    bool must_end() const override { return true; }
  };
  s.constraint = std::make_shared<Ended>();
  EXPECT_EQ(device_sampling_controls(s).min_tokens, 0);
}

TEST(FrameChainReplays, OnlyRowsWhoseControlsStageOnceAFrameInABucket) {
  SamplingState a = seeded(0.9f, 50, 0.8f, 1, 0), b = seeded(0.0f, 0, 1.0f, 2, 0);
  EXPECT_TRUE(frame_chain_replays({&a, &b}, 2));
  EXPECT_TRUE(frame_chain_replays({&a, &b}, 256));
  EXPECT_FALSE(frame_chain_replays({&a, &b}, 1)) << "no bucket of 2 rows";
  EXPECT_FALSE(frame_chain_replays({&a, &b}, 0)) << "graphs off";
  EXPECT_FALSE(frame_chain_replays({}, 8)) << "no rows";
  EXPECT_FALSE(frame_chain_replays({&a, &a}, 8)) << "one state for two rows: the eager chain advances it twice a step";

  // Each kind of per-draw host work makes the frame eager.
  const std::vector<int32_t> history = {4, 5, 6};
  SamplingState penalty = b;
  penalty.repetition_penalty = 1.3f;
  EXPECT_TRUE(frame_chain_replays({&a, &penalty}, 4)) << "a penalty over no history is no work";
  penalty.history = &history;
  EXPECT_FALSE(frame_chain_replays({&a, &penalty}, 4)) << "repetition penalty";
  SamplingState suppressed = b;
  suppressed.suppressed = {3};
  EXPECT_FALSE(frame_chain_replays({&a, &suppressed}, 4)) << "suppressed ids";
  SamplingState below_min = b;
  below_min.suppressed_below_min = {2};
  EXPECT_FALSE(frame_chain_replays({&a, &below_min}, 4)) << "ids masked below min_tokens";
  SamplingState constrained = b;
  constrained.constraint = std::make_shared<AnyId>();
  EXPECT_FALSE(frame_chain_replays({&a, &constrained}, 4)) << "a constraint";
  SamplingState logprobs = b;
  logprobs.logprobs = 0;
  EXPECT_FALSE(frame_chain_replays({&a, &logprobs}, 4)) << "logprobs";
}

TEST(FrameChainGraphs, NoneOffTheCudaKernels) {
  const Backend& cpu = Backend::host();
  EXPECT_EQ(make_frame_chain_graphs(FrameChainSettings{&cpu, 15, 2048, cpu.max_graph_batch()}), nullptr);
  EXPECT_EQ(make_frame_chain_graphs(FrameChainSettings{&cpu, 15, 2048, 8}), nullptr) << "the CPU captures no graph";
  EXPECT_THROW(make_frame_chain_graphs(FrameChainSettings{nullptr, 15, 2048, 8}), Error);
  EXPECT_THROW(make_frame_chain_graphs(FrameChainSettings{&cpu, 0, 2048, 8}), Error);

  // A model's member: made once, on its first frame; without graphs the frame runs eagerly.
  std::optional<std::unique_ptr<FrameChainGraphs>> member;
  SamplingState a = seeded(0.9f, 50, 0.8f, 1, 0);
  const at::Tensor ids = frame_chain_ids(
      member, FrameChainSettings{&cpu, 8, 2049, 0}, at::zeros({1, 4}), {&a}, [](int32_t) -> FrameChain { return {}; },
      [] {
        return at::full({1, 8}, 7, at::kLong);
      });
  EXPECT_TRUE(member.has_value());
  EXPECT_EQ(*member, nullptr);
  EXPECT_TRUE(ids.equal(at::full({1, 8}, 7, at::kLong)));
}

// Graphs that replay every frame, or fail every capture as a CUDA capture can (an operation it
// does not allow), as a GPU build's would (the replay itself runs only on a GPU).
class FakeChainGraphs final : public FrameChainGraphs {
 public:
  FakeChainGraphs(const FrameChainSettings& settings, bool capture_fails, int* runs)
      : settings_(settings), capture_fails_(capture_fails), runs_(runs) {}
  at::Tensor run(const at::Tensor& inputs, const std::vector<SamplingState*>&,
                 const std::function<FrameChain(int32_t)>&) override {
    ++*runs_;
    if (capture_fails_) throw GraphCaptureFailed("capturing a frame chain of 1 rows: operation not permitted");
    return at::full({inputs.size(0), settings_.steps}, 1, at::kLong);
  }
  const FrameChainSettings& settings() const override { return settings_; }

 private:
  FrameChainSettings settings_;
  bool capture_fails_;
  int* runs_;
};

TEST(FrameChainGraphs, AFailedCaptureRunsTheFrameEagerlyAndDropsTheGraphs) {
  const FrameChainSettings settings{&Backend::host(), 8, 2049, 4};
  SamplingState a = seeded(0.9f, 50, 0.8f, 1, 0);
  const auto never = [](int32_t) -> FrameChain { return {}; };
  int eager_runs = 0;
  const auto eager = [&] {
    ++eager_runs;
    return at::full({1, 8}, 2, at::kLong);
  };

  int runs = 0;
  std::optional<std::unique_ptr<FrameChainGraphs>> member = std::make_unique<FakeChainGraphs>(settings, false, &runs);
  EXPECT_EQ(frame_chain_ids(member, settings, at::zeros({1, 4}), {&a}, never, eager).max().item<int64_t>(), 1);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(eager_runs, 0);
  SamplingState logprobs = a;
  logprobs.logprobs = 0;
  EXPECT_EQ(frame_chain_ids(member, settings, at::zeros({1, 4}), {&logprobs}, never, eager).max().item<int64_t>(), 2)
      << "a frame that does not replay runs eagerly";
  EXPECT_EQ(runs, 1);

  member = std::make_unique<FakeChainGraphs>(settings, true, &runs);
  EXPECT_EQ(frame_chain_ids(member, settings, at::zeros({1, 4}), {&a}, never, eager).max().item<int64_t>(), 2);
  EXPECT_EQ(runs, 2);
  ASSERT_TRUE(member.has_value());
  EXPECT_EQ(*member, nullptr) << "the failed graphs are dropped";
  EXPECT_EQ(frame_chain_ids(member, settings, at::zeros({1, 4}), {&a}, never, eager).max().item<int64_t>(), 2);
  EXPECT_EQ(runs, 2) << "no capture is tried again";
  EXPECT_EQ(eager_runs, 3);
}

TEST(FrameChainGraphs, FrameCodesSplitTheRowsOfIds) {
  const at::Tensor ids = at::arange(12, at::kLong).view({3, 4});
  EXPECT_EQ(frame_codes(ids), (std::vector<std::vector<int32_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}));
  EXPECT_EQ(frame_codes(ids.narrow(0, 1, 1)), (std::vector<std::vector<int32_t>>{{4, 5, 6, 7}}));
  EXPECT_TRUE(frame_codes(at::empty({0, 4}, at::kLong)).empty());
  EXPECT_THROW(frame_codes(at::arange(4, at::kLong)), Error);
}

}  // namespace
}  // namespace izwi
