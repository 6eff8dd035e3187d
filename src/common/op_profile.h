#pragma once
// Wall time (and, for products, arithmetic) of the step's parts, grouped by op and by the number of
// tokens in the engine step that ran them, for the benchmarks' step breakdown and compute
// roofline: a decode step of 16 requests files everything it runs under 16, a prefill chunk under
// its length, so each regime reads off its own entries. The op dispatch points (kernels/ops/), the
// CPU linear kernels, the executor (forward, sampling) and the engine (whole step) each time
// themselves; a call outside an engine step files under its own token count. Off by default (one
// relaxed atomic load per call); process-wide. On a GPU a timer measures the host's launch of its
// op, not the op, unless a fence makes every timer wait for the device (set_op_profile_fence), and
// a step replayed from a CUDA graph runs its ops without their timers (it files a GraphReplay).

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace izwi {

/// What a timer covers. Linear and the other ops nest inside Forward, Sample or AudioDecode, which
/// nest in Step.
enum class ProfiledOp {
  Linear,     ///< the CPU linear kernels (every product with weights, the output head included)
  Attention,  ///< paged attention
  Norm,       ///< RMSNorm
  Rope,
  AttentionInputs,  ///< per-head norm, RoPE and K/V cache writes in one kernel (ops::attention_inputs)
  Activation,       ///< SiLU-mul
  ShortConv,
  Forward,      ///< the model's forward pass over the step's tokens
  GraphReplay,  ///< a forward pass replayed from a captured CUDA graph (its ops are not timed)
  Sample,       ///< output head, sampling and any per-row secondary decoder (code predictor)
  AudioDecode,  ///< the codec turning the step's new frames into PCM
  Step,         ///< one engine step, from its batch to its outputs recorded and audio decoded
                ///< (scheduling before it and handing the outputs to callers after it excluded)
};

const char* profiled_op_name(ProfiledOp op);

/// Whether an OpProfilePause lives on this thread.
bool op_profile_paused();

struct OpProfileEntry {
  int64_t calls = 0;
  double flop = 0;     ///< 2 x tokens x in x out per call, for Linear; 0 for the rest
  double seconds = 0;  ///< wall time inside the calls
};

/// Entries keyed by (op, tokens of the step, or of the call outside a step).
using OpProfile = std::map<std::pair<ProfiledOp, int64_t>, OpProfileEntry>;
/// One step size's entries, by op.
using StepProfile = std::map<ProfiledOp, OpProfileEntry>;

/// The entries filed under steps of `tokens` tokens.
StepProfile profile_of_steps(const OpProfile& profile, int64_t tokens);
/// Each op's milliseconds per step, over the profile's Step calls; empty when there were none.
std::map<ProfiledOp, double> ms_per_step(const StepProfile& steps);

void set_op_profiling(bool on);
bool op_profiling();

/// Called by every timer, while profiling, at its start and its end before it reads the clock:
/// a wait for the device's queued work makes each timer cover its op's execution on a GPU (and
/// slows the steps by the waits). Null (the default) for none. Process-wide.
using OpProfileFence = void (*)();
void set_op_profile_fence(OpProfileFence fence);

/// While one lives, the timers of its thread record nothing and call no fence: work that is no
/// step's own (a CUDA graph's warm-up and capture, where a device wait is not allowed).
class OpProfilePause {
 public:
  OpProfilePause();
  ~OpProfilePause();
  OpProfilePause(const OpProfilePause&) = delete;
  OpProfilePause& operator=(const OpProfilePause&) = delete;
};
/// The entries recorded since the last call; clears them.
OpProfile take_op_profile();

/// Times one call from construction to destruction, when profiling is on. A Step timer files the
/// calls inside it (on its thread) under its token count.
class OpTimer {
 public:
  OpTimer(ProfiledOp op, int64_t tokens, double flop = 0)
      : on_(op_profiling() && !op_profile_paused()), op_(op), tokens_(tokens), flop_(flop) {
    if (on_) begin();
  }
  ~OpTimer() {
    if (on_) end();
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  void begin();
  void end();

  bool on_;
  ProfiledOp op_;
  int64_t tokens_;
  double flop_;
  int64_t outer_step_tokens_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// The timer of one linear kernel call: 2 x tokens x in x out FLOP.
inline OpTimer linear_call_timer(int64_t tokens, int64_t in, int64_t out) {
  return OpTimer(ProfiledOp::Linear, tokens, 2.0 * static_cast<double>(tokens) * static_cast<double>(in) * out);
}

}  // namespace izwi
