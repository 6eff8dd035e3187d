// The step profile through the engine on the test device (IZWI_TEST_DEVICE; scripts/gpu_check.sh
// runs it on a GPU): with the device's fence and CUDA graphs off, a decode step's linear layers,
// attention and other ops are timed and add up within its forward pass and sampling, which add up
// within the step; with graphs on, a CUDA device's replayed steps are filed as replays.

#include <gtest/gtest.h>

#include "common/op_profile.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "executor/device_profile_fence.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

class EngineOpProfile : public ::testing::Test {
 protected:
  void TearDown() override {
    set_op_profiling(false);
    set_op_profile_fence(nullptr);
    take_op_profile();
  }

  // The profile of the steps of one token (the decode steps) of a 12-token greedy request, after
  // a first request has warmed the engine (and captured its graphs).
  static StepProfile decode_steps(EngineConfig config) {
    config.enable_prefix_cache = false;  // the second request's prompt is computed again: 11 decode steps
    Engine engine(testing::fixture_dir("llama-tiny"), config);
    Request r;
    r.prompt_ids = {1, 15, 30, 7};
    r.params.max_tokens = 12;
    r.params.min_tokens = 12;
    engine.generate(r);
    take_op_profile();
    set_op_profiling(true);
    engine.generate(r);
    set_op_profiling(false);
    return profile_of_steps(take_op_profile(), 1);
  }
};

double seconds(const StepProfile& steps, ProfiledOp op) {
  const auto it = steps.find(op);
  return it == steps.end() ? 0.0 : it->second.seconds;
}

TEST_F(EngineOpProfile, ADecodeStepsOpsAddUpWithinItWithTheDevicesFence) {
  EngineConfig config = testing::test_engine_config();
  config.use_cuda_graphs = false;
  set_op_profile_fence(device_profile_fence(testing::test_device()));
  const StepProfile steps = decode_steps(config);
  ASSERT_EQ(steps.count(ProfiledOp::Step), 1u);
  EXPECT_EQ(steps.at(ProfiledOp::Step).calls, 11);
  EXPECT_EQ(steps.count(ProfiledOp::GraphReplay), 0u);
  EXPECT_GT(seconds(steps, ProfiledOp::Linear), 0);
  EXPECT_GT(seconds(steps, ProfiledOp::Attention), 0);
  EXPECT_GT(seconds(steps, ProfiledOp::Norm) + seconds(steps, ProfiledOp::AttentionInputs), 0);
  double ops = 0;
  for (const ProfiledOp op : {ProfiledOp::Linear, ProfiledOp::Attention, ProfiledOp::Norm, ProfiledOp::Rope,
                              ProfiledOp::AttentionInputs, ProfiledOp::Activation}) {
    ops += seconds(steps, op);
  }
  const double model = seconds(steps, ProfiledOp::Forward) + seconds(steps, ProfiledOp::Sample);
  EXPECT_LE(ops, model);
  EXPECT_LE(model, seconds(steps, ProfiledOp::Step));
}

TEST_F(EngineOpProfile, ReplayedDecodeStepsAreFiledAsReplays) {
  if (!testing::test_device().is_cuda()) GTEST_SKIP() << "CUDA graphs replay only on a CUDA device";
  const StepProfile steps = decode_steps(testing::test_engine_config());
  ASSERT_EQ(steps.count(ProfiledOp::GraphReplay), 1u);
  EXPECT_EQ(steps.at(ProfiledOp::GraphReplay).calls, steps.at(ProfiledOp::Step).calls);
  EXPECT_EQ(steps.count(ProfiledOp::Attention), 0u);  // the replay runs the ops without their timers
}

}  // namespace
}  // namespace izwi
