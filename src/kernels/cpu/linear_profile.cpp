#include "kernels/cpu/linear_profile.h"

#include <atomic>
#include <mutex>

namespace izwi {

namespace {

std::atomic<bool> profiling{false};
std::mutex profile_mutex;
std::map<int64_t, LinearProfileEntry> profile;

}  // namespace

void set_linear_profiling(bool on) { profiling.store(on, std::memory_order_relaxed); }

bool linear_profiling() { return profiling.load(std::memory_order_relaxed); }

std::map<int64_t, LinearProfileEntry> take_linear_profile() {
  std::lock_guard<std::mutex> lock(profile_mutex);
  std::map<int64_t, LinearProfileEntry> taken;
  taken.swap(profile);
  return taken;
}

void record_linear_call(int64_t tokens, double flop, double seconds) {
  std::lock_guard<std::mutex> lock(profile_mutex);
  LinearProfileEntry& entry = profile[tokens];
  entry.calls += 1;
  entry.flop += flop;
  entry.seconds += seconds;
}

}  // namespace izwi
