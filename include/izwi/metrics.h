#pragma once
/// @file metrics.h
/// A snapshot of engine performance counters.

#include <cstdint>

namespace izwi {

/// Percentiles of a latency distribution, in milliseconds.
struct LatencyStats {
  double p50 = 0;      ///< Median.
  double p90 = 0;      ///< 90th percentile.
  double p99 = 0;      ///< 99th percentile.
  double mean = 0;     ///< Arithmetic mean.
  uint64_t count = 0;  ///< Requests the statistics cover.
};

/// Counters since the engine started; latency stats cover the most recent finished requests.
struct MetricsSnapshot {
  uint64_t requests_finished = 0;         ///< Requests that ended (any finish reason).
  uint64_t requests_aborted = 0;          ///< Of those, aborted (FinishReason::Abort).
  uint64_t requests_failed = 0;           ///< Of those, failed (FinishReason::Error).
  uint64_t prompt_tokens = 0;             ///< Prompt positions admitted (cached or computed).
  uint64_t generated_tokens = 0;          ///< Tokens (or frames) generated.
  uint64_t prefix_cache_hit_tokens = 0;   ///< Prompt positions served from the prefix cache.
  double prefix_cache_hit_rate = 0;       ///< hit tokens / prompt tokens.
  uint64_t preemptions = 0;               ///< Sequences evicted for blocks and recomputed later.
  uint64_t steps = 0;                     ///< Engine steps run.
  double uptime_s = 0;                    ///< Seconds since the engine started.
  double generated_tokens_per_s = 0;      ///< generated_tokens / uptime_s.
  LatencyStats request_latency_ms;        ///< Submission to finish.
  LatencyStats ttft_ms;                   ///< Submission to first token.
  LatencyStats time_per_output_token_ms;  ///< (total - ttft) / (tokens - 1), per request.
  int32_t waiting_requests = 0;           ///< Queued, not yet admitted (now).
  int32_t running_requests = 0;           ///< In the running batch (now).
  int32_t kv_blocks_total = 0;            ///< Blocks in the paged pool.
  int32_t kv_blocks_free = 0;             ///< Blocks no sequence or cache entry holds (now).
  int32_t kv_blocks_cached = 0;           ///< Held only by the prefix cache (evictable).
};

}  // namespace izwi
