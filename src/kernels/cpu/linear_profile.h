#pragma once
// Time and arithmetic of the CPU linear kernels, grouped by the number of tokens per call, for the
// benchmarks' compute roofline: a decode step of 16 requests multiplies 16 tokens at a time, a
// prefill chunk its length, so each regime reads off its own entry. Off by default (one relaxed
// atomic load per call); process-wide.

#include <chrono>
#include <cstdint>
#include <map>

namespace izwi {

struct LinearProfileEntry {
  int64_t calls = 0;
  double flop = 0;     ///< 2 x tokens x in x out per call
  double seconds = 0;  ///< wall time inside the kernels
};

void set_linear_profiling(bool on);
bool linear_profiling();
/// The entries recorded since the last call, keyed by tokens per call; clears them.
std::map<int64_t, LinearProfileEntry> take_linear_profile();
void record_linear_call(int64_t tokens, double flop, double seconds);

/// Times one kernel call from construction to destruction, when profiling is on.
class LinearCallTimer {
 public:
  LinearCallTimer(int64_t tokens, int64_t in, int64_t out)
      : on_(linear_profiling()), tokens_(tokens), flop_(2.0 * static_cast<double>(tokens) * in * out) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~LinearCallTimer() {
    if (on_)
      record_linear_call(tokens_, flop_,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  LinearCallTimer(const LinearCallTimer&) = delete;
  LinearCallTimer& operator=(const LinearCallTimer&) = delete;

 private:
  bool on_;
  int64_t tokens_;
  double flop_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace izwi
