// The step profile: off by default, calls inside a Step timer filed under the step's token count,
// calls outside one under their own, and taking the profile clears it.

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/op_profile.h"

namespace izwi {
namespace {

class OpProfileTest : public ::testing::Test {
 protected:
  void SetUp() override { take_op_profile(); }
  void TearDown() override {
    set_op_profiling(false);
    set_op_profile_fence(nullptr);
    take_op_profile();
  }
};

TEST_F(OpProfileTest, RecordsNothingWhileOff) {
  { const OpTimer timer(ProfiledOp::Norm, 4); }
  EXPECT_TRUE(take_op_profile().empty());
}

TEST_F(OpProfileTest, FilesCallsUnderTheEnclosingStepsTokens) {
  set_op_profiling(true);
  {
    const OpTimer step(ProfiledOp::Step, 16);
    { const OpTimer linear = linear_call_timer(3, 10, 20); }  // the 3 rows a head samples
    { const OpTimer attention(ProfiledOp::Attention, 16); }
  }
  { const OpTimer outside = linear_call_timer(5, 2, 2); }
  const OpProfile profile = take_op_profile();
  ASSERT_EQ(profile.size(), 4u);
  EXPECT_EQ(profile.at({ProfiledOp::Step, 16}).calls, 1);
  EXPECT_EQ(profile.at({ProfiledOp::Attention, 16}).calls, 1);
  const OpProfileEntry& linear = profile.at({ProfiledOp::Linear, 16});
  EXPECT_EQ(linear.calls, 1);
  EXPECT_DOUBLE_EQ(linear.flop, 2.0 * 3 * 10 * 20);
  EXPECT_EQ(profile.at({ProfiledOp::Linear, 5}).calls, 1);
  EXPECT_GE(profile.at({ProfiledOp::Step, 16}).seconds, profile.at({ProfiledOp::Linear, 16}).seconds);
  EXPECT_TRUE(take_op_profile().empty());
}

TEST_F(OpProfileTest, MillisecondsPerStepOfOneStepSize) {
  OpProfile profile;
  profile[{ProfiledOp::Step, 16}] = {4, 0, 0.040};
  profile[{ProfiledOp::Linear, 16}] = {200, 1e9, 0.020};
  profile[{ProfiledOp::Linear, 512}] = {50, 1e10, 0.500};  // a prefill step, another size
  const StepProfile steps = profile_of_steps(profile, 16);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps.at(ProfiledOp::Linear).calls, 200);
  const std::map<ProfiledOp, double> ms = ms_per_step(steps);
  EXPECT_DOUBLE_EQ(ms.at(ProfiledOp::Step), 10.0);
  EXPECT_DOUBLE_EQ(ms.at(ProfiledOp::Linear), 5.0);
  EXPECT_TRUE(ms_per_step(profile_of_steps(profile, 512)).empty());  // no Step entry of that size
}

TEST_F(OpProfileTest, NamesEveryOp) {
  EXPECT_STREQ(profiled_op_name(ProfiledOp::Linear), "linear");
  EXPECT_STREQ(profiled_op_name(ProfiledOp::AudioDecode), "audio_decode");
  EXPECT_STREQ(profiled_op_name(ProfiledOp::Step), "step");
  EXPECT_STREQ(profiled_op_name(ProfiledOp::GraphReplay), "graph_replay");
}

// The fence (a device wait on a GPU) runs at each timer's start and end, inside what it measures
// for the enclosing timers: each timer then covers the device work its op queued.
std::vector<std::string> fence_log;
void log_fence() { fence_log.push_back("fence"); }

TEST_F(OpProfileTest, AFenceRunsAtEveryTimersStartAndEndWhileProfiling) {
  fence_log.clear();
  set_op_profile_fence(&log_fence);
  { const OpTimer off(ProfiledOp::Norm, 4); }
  EXPECT_TRUE(fence_log.empty());  // profiling off: no wait
  set_op_profiling(true);
  {
    const OpTimer step(ProfiledOp::Step, 2);
    EXPECT_EQ(fence_log.size(), 1u);
    { const OpTimer norm(ProfiledOp::Norm, 2); }
    EXPECT_EQ(fence_log.size(), 3u);
  }
  EXPECT_EQ(fence_log.size(), 4u);
  set_op_profile_fence(nullptr);
  { const OpTimer norm(ProfiledOp::Norm, 2); }
  EXPECT_EQ(fence_log.size(), 4u);
  EXPECT_EQ(take_op_profile().at({ProfiledOp::Norm, 2}).calls, 2);
}

// A pause (a CUDA graph's capture) hides its thread's timers: nothing recorded, no fence.
TEST_F(OpProfileTest, APausedThreadRecordsNothingAndCallsNoFence) {
  fence_log.clear();
  set_op_profile_fence(&log_fence);
  set_op_profiling(true);
  {
    const OpProfilePause pause;
    EXPECT_TRUE(op_profile_paused());
    { const OpTimer linear = linear_call_timer(1, 2, 2); }
    std::thread([] {
      EXPECT_FALSE(op_profile_paused());  // another thread's timers still run
      const OpTimer norm(ProfiledOp::Norm, 1);
    }).join();
  }
  EXPECT_FALSE(op_profile_paused());
  const OpProfile profile = take_op_profile();
  EXPECT_EQ(profile.count({ProfiledOp::Linear, 1}), 0u);
  EXPECT_EQ(profile.at({ProfiledOp::Norm, 1}).calls, 1);
  EXPECT_EQ(fence_log.size(), 2u);
}

}  // namespace
}  // namespace izwi
