#pragma once
// The engine configuration the throughput benches share: a batch and step budget that admit every
// concurrent request at once, no prefix cache (each request has distinct random inputs), and a KV
// pool sized to what the requests need.

#include <algorithm>
#include <cstdint>
#include <string>

#include "izwi/config.h"

namespace izwi::bench {

/// `positions` = prompt + generated positions of one request; blocks of 16 positions, 16 spare.
inline EngineConfig bench_engine_config(int32_t max_concurrency, int32_t positions, int32_t threads,
                                        const std::string& weight_dtype) {
  EngineConfig config;
  config.max_batch_size = std::max(8, max_concurrency);
  config.max_tokens_per_step = std::max(512, config.max_batch_size);
  config.num_threads = threads;
  config.weight_dtype = weight_dtype;
  config.enable_prefix_cache = false;
  config.num_kv_blocks = (max_concurrency * positions + 15) / 16 + 16;
  return config;
}

}  // namespace izwi::bench
