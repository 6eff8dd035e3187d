#pragma once
/// @file config.h
/// Engine configuration. Defaults follow the original izwi engine (block 16, batch 8, 512
/// tokens per step, chunked prefill and preemption on, FCFS).

#include <cstdint>
#include <functional>
#include <string>

#include "izwi/export.h"

namespace izwi {

/// Order in which waiting requests are admitted and running ones are preempted.
enum class SchedulingPolicy {
  Fcfs,      ///< First come, first served.
  Priority,  ///< Larger Request::priority first; ties by arrival.
};

/// Everything the engine needs besides the model folder.
struct IZWI_API EngineConfig {
  // Scheduling
  int32_t max_batch_size = 8;                        ///< Sequences running at once.
  int32_t max_tokens_per_step = 512;                 ///< Positions computed per step over the whole batch.
  bool enable_chunked_prefill = true;                ///< Split prompts longer than the step budget.
  bool enable_preemption = true;                     ///< Evict the lowest-priority sequence when blocks run out.
  SchedulingPolicy policy = SchedulingPolicy::Fcfs;  ///< Admission and preemption order.
  int32_t max_seq_len = 0;                           ///< Prompt + output limit; 0 = the model's max positions.
  /// A live transcription stream that has waited this long for audio (no position left to
  /// compute, finish_audio() not called) gives up its batch slot and KV blocks when requests are
  /// waiting for a slot in a full batch; when its audio comes it is queued again and recomputes its
  /// positions from its kept audio embeddings (same tokens). 0 = as soon as a request waits.
  /// A stream fed every 80 ms never waits that long. At most one hour.
  int32_t stream_idle_timeout_ms = 1000;

  // KV cache
  int32_t block_size = 16;       ///< Positions per KV block.
  int32_t num_kv_blocks = 1024;  ///< Blocks in the paged pool (shared by all sequences).
  /// > 0: size the paged pool from the memory free once the weights are loaded instead, as this
  /// fraction of it (num_kv_blocks is then ignored): cudaMemGetInfo on a CUDA device, the
  /// kernel's MemAvailable on the CPU; not supported on MPS. ModelInfo reports the result. In
  /// [0, 0.98].
  double kv_cache_memory_fraction = 0.0;
  /// Storage of the paged K/V pools: "auto" = dtype, "float32", or "bfloat16": with float32
  /// compute, half the bytes per cached position (more positions per block budget, half the bytes
  /// attention reads per step); K and V are rounded to bf16 as they are written, so results are
  /// no longer those of a float32 cache.
  std::string kv_cache_dtype = "auto";
  bool enable_prefix_cache = true;  ///< Reuse KV of shared prompt prefixes (radix tree).

  // Execution
  std::string device = "cpu";     ///< "cpu", "cuda", "cuda:1" or "mps".
  std::string dtype = "float32";  ///< Compute dtype: float32, bfloat16 or float16.
  /// Storage of weight matrices. "auto" = dtype, except that with izwi's CPU kernels (float32
  /// compute) a checkpoint's bf16 matrices stay bf16 (never widened to float32). bfloat16 with
  /// float32 compute halves the bytes a CPU decode step reads. "int8" (symmetric, one scale per
  /// output channel) and "int4" (symmetric, one scale per group of 32 columns; "int4:64" for 64)
  /// quantize every linear layer and tied output head at load, 4x / 7x fewer bytes than float32
  /// with inputs quantized per token row (docs/quantization.md); embeddings, norms and codecs stay
  /// float, embedding tables in bf16. On the CPU with device cpu, dtype float32 and
  /// use_fast_kernels; int4 also on CUDA with dtype bfloat16 (compiled, not yet run on a GPU).
  std::string weight_dtype = "auto";
  /// CPU threads; 0 = OMP_NUM_THREADS when it is set to a number in [1, 1024], else all hardware
  /// threads. Process-wide, as libtorch's intra-op pool is. The
  /// engine runs its kernels from its worker thread; OpenMP work the host starts from other
  /// threads makes libgomp stop spinning between kernels and costs decode speed (docs/architecture.md).
  int32_t num_threads = 0;
  /// CPU kernels (Eigen); false = plain libtorch ops. On the CPU this also makes OpenBLAS, when it
  /// is libtorch's BLAS, run each call on the calling thread, process-wide: its spinning workers
  /// would compete with the engine's.
  bool use_fast_kernels = true;
  /// Which compiled variant of the CPU linear kernel to use (with use_fast_kernels on the CPU):
  /// "auto" = the IZWI_CPU_KERNELS environment variable when set, else the fastest this CPU runs;
  /// or "avx512_bf16", "avx512", "avx2", "portable". They differ only in speed, except for bf16
  /// weights (weight_dtype bfloat16) on CPUs with avx512_bf16, where "auto" picks "avx512_bf16":
  /// it multiplies them by inputs rounded to bf16, as bf16 inference in transformers and llama.cpp
  /// does (about twice the FLOPs per cycle). "avx512" keeps float32 arithmetic for them.
  std::string cpu_kernels = "auto";
  /// On a CUDA device with use_fast_kernels (builds with IZWI_WITH_CUDA): decode steps of up to
  /// min(max_batch_size, 256) sequences are captured as CUDA graphs, one per power-of-two batch
  /// size, and replayed: a text model's whole step with its output head, a speech model's backbone
  /// (Qwen3-TTS's talker, LFM2-Audio's LFM2) from the step's input embeddings; and so are the
  /// speech models' per-frame chains (the Qwen3-TTS code predictor, LFM2-Audio's depthformer), one
  /// per power-of-two row count. false runs every step and frame op by op.
  bool use_cuda_graphs = true;
  /// Keep the memory each step frees for the next one instead of handing it back to the kernel
  /// (process-wide: glibc's malloc thresholds, and libtorch's CPU allocator wrapped to keep blocks
  /// over 32 MiB, up to 512 MiB of them): a step's large temporaries are otherwise mapped and
  /// zeroed afresh (docs/architecture.md). The process then keeps its high-water mark of memory.
  bool retain_freed_memory = true;
  /// Scan every weight tensor for NaN and Inf at load and refuse the model naming the first one
  /// that holds any (InvalidFormat). Off by default: it reads all the weights once more.
  bool check_weights_finite = false;

  // Logging
  std::string log_level = "warn";  ///< trace, debug, info, warn, error, off.
  /// Called on the constructing thread as the model's weights load, with the bytes of stored
  /// tensors read (or skipped) so far and the checkpoint's total; the last call has done == total.
  /// For progress bars. Not part of the JSON form.
  std::function<void(int64_t done_bytes, int64_t total_bytes)> on_load_progress;

  /// Throws izwi::Error(InvalidArgument) naming the first field out of range. Upper bounds:
  /// max_batch_size <= 4096, max_tokens_per_step <= 2^20, max_seq_len <= 2^24, block_size <= 1024,
  /// num_kv_blocks * block_size <= 2^31 - 1, num_threads <= 1024, kv_cache_memory_fraction <= 0.98.
  void validate() const;

  /// Reads a JSON object whose keys are the field names above; unknown keys are an error, and so
  /// is an integer that does not fit its field (InvalidFormat naming it).
  static EngineConfig from_json_file(const std::string& path);
  /// Same as from_json_file, from a JSON string; `origin` names it in error messages.
  static EngineConfig from_json_string(const std::string& json, const std::string& origin = "<string>");
};

}  // namespace izwi
