#include "common/op_profile.h"

#include <atomic>
#include <mutex>

#include "common/enum_names.h"

namespace izwi {

namespace {

std::atomic<bool> profiling{false};
std::atomic<OpProfileFence> fence{nullptr};
thread_local int pauses = 0;
std::mutex profile_mutex;
OpProfile profile;
thread_local int64_t step_tokens = 0;  // of the Step timer running on this thread; 0 = none

void wait_for_device() {
  if (const OpProfileFence f = fence.load(std::memory_order_relaxed)) f();
}

constexpr EnumName<ProfiledOp> kProfiledOpNames[] = {
    {ProfiledOp::Linear, "linear"},
    {ProfiledOp::Attention, "attention"},
    {ProfiledOp::Norm, "norm"},
    {ProfiledOp::Rope, "rope"},
    {ProfiledOp::AttentionInputs, "attention_inputs"},
    {ProfiledOp::Activation, "activation"},
    {ProfiledOp::ShortConv, "short_conv"},
    {ProfiledOp::Forward, "forward"},
    {ProfiledOp::GraphReplay, "graph_replay"},
    {ProfiledOp::Sample, "sample"},
    {ProfiledOp::AudioDecode, "audio_decode"},
    {ProfiledOp::Step, "step"},
};
static_assert(enum_names_in_order(kProfiledOpNames));

}  // namespace

const char* profiled_op_name(ProfiledOp op) { return enum_name(kProfiledOpNames, op, "?"); }

StepProfile profile_of_steps(const OpProfile& profile, int64_t tokens) {
  StepProfile steps;
  for (const auto& [key, entry] : profile) {
    if (key.second == tokens) steps[key.first] = entry;
  }
  return steps;
}

std::map<ProfiledOp, double> ms_per_step(const StepProfile& steps) {
  std::map<ProfiledOp, double> ms;
  const auto step = steps.find(ProfiledOp::Step);
  if (step == steps.end() || step->second.calls == 0) return ms;
  for (const auto& [op, entry] : steps) ms[op] = entry.seconds * 1e3 / static_cast<double>(step->second.calls);
  return ms;
}

void set_op_profiling(bool on) { profiling.store(on, std::memory_order_relaxed); }

bool op_profiling() { return profiling.load(std::memory_order_relaxed); }

void set_op_profile_fence(OpProfileFence f) { fence.store(f); }

OpProfilePause::OpProfilePause() { ++pauses; }
OpProfilePause::~OpProfilePause() { --pauses; }
bool op_profile_paused() { return pauses > 0; }

OpProfile take_op_profile() {
  std::lock_guard<std::mutex> lock(profile_mutex);
  OpProfile taken;
  taken.swap(profile);
  return taken;
}

void OpTimer::begin() {
  if (op_ == ProfiledOp::Step) {
    outer_step_tokens_ = step_tokens;
    step_tokens = tokens_;
  } else if (step_tokens != 0) {
    tokens_ = step_tokens;
  }
  wait_for_device();
  start_ = std::chrono::steady_clock::now();
}

void OpTimer::end() {
  wait_for_device();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (op_ == ProfiledOp::Step) step_tokens = outer_step_tokens_;
  std::lock_guard<std::mutex> lock(profile_mutex);
  OpProfileEntry& entry = profile[{op_, tokens_}];
  entry.calls += 1;
  entry.flop += flop_;
  entry.seconds += seconds;
}

}  // namespace izwi
