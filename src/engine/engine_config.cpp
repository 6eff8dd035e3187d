// EngineConfig validation and JSON loading.

#include <cstdint>
#include <set>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/regular_file.h"
#include "izwi/config.h"

namespace izwi {

namespace {

constexpr int32_t kMaxBatchSize = 4096;
constexpr int32_t kMaxTokensPerStep = 1 << 20;
constexpr int32_t kMaxSeqLen = 1 << 24;  // the largest max_position_embeddings a model config may give
constexpr int32_t kMaxBlockSize = 1024;
constexpr int32_t kMaxThreads = 1024;
constexpr int32_t kMaxStreamIdleTimeoutMs = 3600 * 1000;
constexpr double kMaxKvCacheMemoryFraction = 0.98;  // leaves the device some room for activations

}  // namespace

void EngineConfig::validate() const {
  auto require = [](bool ok, const char* field, const std::string& rule) {
    if (!ok) fail(ErrorCode::InvalidArgument, "EngineConfig.{} {}", field, rule);
  };
  // Upper bounds keep a typo (or a hostile config) from sizing buffers, thread pools or the
  // block table beyond what any machine has; each is far above real use.
  require(max_batch_size >= 1 && max_batch_size <= kMaxBatchSize, "max_batch_size",
          fmt::format("must be in [1, {}]", kMaxBatchSize));
  require(max_tokens_per_step >= 1 && max_tokens_per_step <= kMaxTokensPerStep, "max_tokens_per_step",
          fmt::format("must be in [1, {}]", kMaxTokensPerStep));
  require(max_tokens_per_step >= max_batch_size, "max_tokens_per_step",
          "must be >= max_batch_size (every running sequence needs a position per step)");
  require(max_seq_len >= 0 && max_seq_len <= kMaxSeqLen, "max_seq_len",
          fmt::format("must be in [0, {}] (0 = the model's limit)", kMaxSeqLen));
  require(stream_idle_timeout_ms >= 0 && stream_idle_timeout_ms <= kMaxStreamIdleTimeoutMs, "stream_idle_timeout_ms",
          fmt::format("must be in [0, {}]", kMaxStreamIdleTimeoutMs));
  require(block_size >= 1 && block_size <= kMaxBlockSize, "block_size",
          fmt::format("must be in [1, {}]", kMaxBlockSize));
  require(num_kv_blocks >= 1, "num_kv_blocks", "must be >= 1");
  // Positions in the pool are int32: num_kv_blocks * block_size must fit.
  require(static_cast<int64_t>(num_kv_blocks) * block_size <= INT32_MAX, "num_kv_blocks",
          fmt::format("* block_size must be <= {} (got {} * {})", INT32_MAX, num_kv_blocks, block_size));
  // Written so that NaN fails too.
  require(kv_cache_memory_fraction >= 0.0 && kv_cache_memory_fraction <= kMaxKvCacheMemoryFraction,
          "kv_cache_memory_fraction", fmt::format("must be in [0, {}] (0 = num_kv_blocks)", kMaxKvCacheMemoryFraction));
  require(num_threads >= 0 && num_threads <= kMaxThreads, "num_threads",
          fmt::format("must be in [0, {}] (0 = all hardware threads)", kMaxThreads));
  require(cpu_kernels == "auto" || cpu_kernels == "avx512_bf16" || cpu_kernels == "avx512" || cpu_kernels == "avx2" ||
              cpu_kernels == "portable",
          "cpu_kernels", fmt::format("is '{}'; must be auto, avx512_bf16, avx512, avx2 or portable", cpu_kernels));
  require(dtype == "float32" || dtype == "bfloat16" || dtype == "float16", "dtype",
          fmt::format("is '{}'; must be float32, bfloat16 or float16", dtype));
  require(
      weight_dtype == "auto" || weight_dtype == "float32" || weight_dtype == "bfloat16" || weight_dtype == "float16" ||
          weight_dtype == "int8" || weight_dtype == "int4" || weight_dtype == "int4:32" || weight_dtype == "int4:64",
      "weight_dtype",
      fmt::format("is '{}'; must be auto, float32, bfloat16, float16, int8, int4, int4:32 or int4:64", weight_dtype));
  require(kv_cache_dtype == "auto" || kv_cache_dtype == "float32" || kv_cache_dtype == "bfloat16", "kv_cache_dtype",
          fmt::format("is '{}'; must be auto, float32 or bfloat16", kv_cache_dtype));
  // libtorch's CPU kernels have no float16 matmul: such an engine would load, then fail every
  // request as Internal at its first step. float16 checkpoints still load (converted to dtype).
  if (dtype == "float16" && (device == "cpu" || device.rfind("cpu:", 0) == 0)) {
    fail(ErrorCode::Unsupported,
         "EngineConfig.dtype float16 is not supported on the CPU (no float16 matrix kernels); use float32 or bfloat16 "
         "(float16 checkpoints load either way)");
  }
  const std::set<std::string> levels = {"trace", "debug", "info", "warn", "error", "off"};
  require(levels.count(log_level) != 0, "log_level",
          fmt::format("is '{}'; must be one of trace, debug, info, warn, error, off", log_level));
}

EngineConfig EngineConfig::from_json_string(const std::string& json, const std::string& origin) {
  const nlohmann::json doc = parse_json(json, origin);  // bounded nesting depth
  const JsonFields f(doc, origin);
  static const std::set<std::string> known = {"max_batch_size",
                                              "max_tokens_per_step",
                                              "enable_chunked_prefill",
                                              "enable_preemption",
                                              "policy",
                                              "max_seq_len",
                                              "block_size",
                                              "num_kv_blocks",
                                              "kv_cache_memory_fraction",
                                              "kv_cache_dtype",
                                              "enable_prefix_cache",
                                              "device",
                                              "dtype",
                                              "weight_dtype",
                                              "num_threads",
                                              "use_fast_kernels",
                                              "cpu_kernels",
                                              "use_cuda_graphs",
                                              "retain_freed_memory",
                                              "check_weights_finite",
                                              "log_level",
                                              "stream_idle_timeout_ms"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (known.count(it.key()) == 0) fail(ErrorCode::InvalidArgument, "{}: unknown field '{}'", origin, it.key());
  }
  EngineConfig c;
  c.max_batch_size = f.get_or("max_batch_size", c.max_batch_size);
  c.max_tokens_per_step = f.get_or("max_tokens_per_step", c.max_tokens_per_step);
  c.enable_chunked_prefill = f.get_or("enable_chunked_prefill", c.enable_chunked_prefill);
  c.enable_preemption = f.get_or("enable_preemption", c.enable_preemption);
  c.max_seq_len = f.get_or("max_seq_len", c.max_seq_len);
  c.stream_idle_timeout_ms = f.get_or("stream_idle_timeout_ms", c.stream_idle_timeout_ms);
  c.block_size = f.get_or("block_size", c.block_size);
  c.num_kv_blocks = f.get_or("num_kv_blocks", c.num_kv_blocks);
  c.kv_cache_memory_fraction = f.get_or("kv_cache_memory_fraction", c.kv_cache_memory_fraction);
  c.kv_cache_dtype = f.get_or("kv_cache_dtype", c.kv_cache_dtype);
  c.enable_prefix_cache = f.get_or("enable_prefix_cache", c.enable_prefix_cache);
  c.device = f.get_or("device", c.device);
  c.dtype = f.get_or("dtype", c.dtype);
  c.weight_dtype = f.get_or("weight_dtype", c.weight_dtype);
  c.num_threads = f.get_or("num_threads", c.num_threads);
  c.use_fast_kernels = f.get_or("use_fast_kernels", c.use_fast_kernels);
  c.cpu_kernels = f.get_or("cpu_kernels", c.cpu_kernels);
  c.use_cuda_graphs = f.get_or("use_cuda_graphs", c.use_cuda_graphs);
  c.retain_freed_memory = f.get_or("retain_freed_memory", c.retain_freed_memory);
  c.check_weights_finite = f.get_or("check_weights_finite", c.check_weights_finite);
  c.log_level = f.get_or("log_level", c.log_level);
  const std::string policy = f.get_or<std::string>("policy", "fcfs");
  if (policy == "fcfs") {
    c.policy = SchedulingPolicy::Fcfs;
  } else if (policy == "priority") {
    c.policy = SchedulingPolicy::Priority;
  } else {
    fail(ErrorCode::InvalidArgument, "{}: field 'policy' is '{}', expected fcfs or priority", origin, policy);
  }
  c.validate();
  return c;
}

EngineConfig EngineConfig::from_json_file(const std::string& path) {
  return from_json_string(read_regular_file(path, "engine config", kMaxJsonFileBytes), path);
}

}  // namespace izwi
