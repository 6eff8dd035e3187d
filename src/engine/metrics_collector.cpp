#include "engine/metrics_collector.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace izwi {

MetricsCollector::MetricsCollector(size_t window) : window_(window) {}

void MetricsCollector::record_admission(int32_t prompt_tokens, int32_t prefix_hit_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  totals_.prompt_tokens += static_cast<uint64_t>(prompt_tokens);
  totals_.prefix_cache_hit_tokens += static_cast<uint64_t>(prefix_hit_tokens);
}

void MetricsCollector::record_step(int32_t generated_tokens, int32_t preemptions) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++totals_.steps;
  totals_.generated_tokens += static_cast<uint64_t>(generated_tokens);
  totals_.preemptions += static_cast<uint64_t>(preemptions);
}

void MetricsCollector::record_finish(FinishReason reason, const Timings& t, int32_t num_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reason == FinishReason::Abort) {
    ++totals_.requests_aborted;
    return;
  }
  if (reason == FinishReason::Error) {
    ++totals_.requests_failed;
    return;
  }
  ++totals_.requests_finished;
  push(latency_ms_, t.total_ms);
  push(ttft_ms_, t.ttft_ms);
  if (num_tokens > 1) push(tpot_ms_, (t.total_ms - t.ttft_ms) / (num_tokens - 1));
}

void MetricsCollector::record_queues(int32_t waiting, int32_t running, int32_t blocks_total, int32_t blocks_free,
                                     int32_t blocks_cached) {
  std::lock_guard<std::mutex> lock(mutex_);
  totals_.waiting_requests = waiting;
  totals_.running_requests = running;
  totals_.kv_blocks_total = blocks_total;
  totals_.kv_blocks_free = blocks_free;
  totals_.kv_blocks_cached = blocks_cached;
}

void MetricsCollector::push(std::deque<double>& samples, double value) {
  samples.push_back(value);
  if (samples.size() > window_) samples.pop_front();
}

LatencyStats MetricsCollector::summarize(const std::deque<double>& samples) {
  LatencyStats s;
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {
    const size_t index = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size()))) - 1;
    return sorted[std::min(index, sorted.size() - 1)];
  };
  s.p50 = pct(0.50);
  s.p90 = pct(0.90);
  s.p99 = pct(0.99);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  s.count = sorted.size();
  return s;
}

MetricsSnapshot MetricsCollector::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MetricsSnapshot s = totals_;
  s.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  s.generated_tokens_per_s = s.uptime_s > 0 ? static_cast<double>(s.generated_tokens) / s.uptime_s : 0;
  s.prefix_cache_hit_rate =
      s.prompt_tokens > 0 ? static_cast<double>(s.prefix_cache_hit_tokens) / static_cast<double>(s.prompt_tokens) : 0;
  s.request_latency_ms = summarize(latency_ms_);
  s.ttft_ms = summarize(ttft_ms_);
  s.time_per_output_token_ms = summarize(tpot_ms_);
  return s;
}

}  // namespace izwi
