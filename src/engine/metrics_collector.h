#pragma once
// Engine counters and latency distributions. Written by the worker thread, read by any thread.

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>

#include "izwi/metrics.h"
#include "izwi/output.h"

namespace izwi {

class MetricsCollector {
 public:
  explicit MetricsCollector(size_t window = 1000);

  void record_admission(int32_t prompt_tokens, int32_t prefix_hit_tokens);
  void record_step(int32_t generated_tokens, int32_t preemptions);
  void record_finish(FinishReason reason, const Timings& timings, int32_t num_tokens);
  void record_queues(int32_t waiting, int32_t running, int32_t blocks_total, int32_t blocks_free,
                     int32_t blocks_cached);

  MetricsSnapshot snapshot() const;

 private:
  static LatencyStats summarize(const std::deque<double>& samples);
  void push(std::deque<double>& samples, double value);

  const size_t window_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  MetricsSnapshot totals_;
  std::deque<double> latency_ms_, ttft_ms_, tpot_ms_;
};

}  // namespace izwi
