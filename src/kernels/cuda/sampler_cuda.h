#pragma once
// Device-side sampling: one row of logits per request to one token id, with the CPU Sampler's
// processors in its order (repetition penalty, suppression, min-tokens EOS suppression,
// temperature, top-k keeping ties with the k-th logit, top-p, then a draw or argmax). Only the ids
// are written, so a step copies back rows * 4 bytes instead of its logits.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace izwi {

/// One request's controls (a device array, one per row). The id lists are ranges of
/// SamplerCudaArgs::id_lists.
struct SamplingParamsCuda {
  float temperature = 0.0f;  ///< 0 = greedy.
  int32_t top_k = 0;         ///< 0 = off.
  float top_p = 1.0f;        ///< 1 = off.
  float repetition_penalty = 1.0f;
  int32_t min_tokens = 0;
  int32_t num_generated = 0;
  /// Philox: the request's seed and the index of this draw in its stream (the caller counts the
  /// draws, so a request's samples depend on its seed only, not on its batch neighbours).
  uint64_t seed = 0;
  uint64_t draw = 0;
  int64_t history_offset = 0, history_length = 0;  ///< Ids the repetition penalty sees.
  int64_t suppressed_offset = 0, suppressed_length = 0;
  int64_t below_min_offset = 0, below_min_length = 0;  ///< Masked while num_generated < min_tokens.
};

struct SamplerCudaArgs {
  float* logits;  ///< [rows, vocab]; modified in place (scratch), as on the CPU.
  int32_t rows;
  int32_t vocab;
  const SamplingParamsCuda* params;  ///< [rows]
  const int32_t* id_lists;
  uint32_t* workspace;  ///< sampler_workspace_bytes(rows, vocab), zeroed once; left zeroed.
  int32_t* ids;         ///< [rows]: the sampled ids.
};

size_t sampler_workspace_bytes(int32_t rows, int32_t vocab);

/// The draw uses Philox (curand), not the CPU's mt19937_64, so sampled ids match the CPU only in
/// distribution, and exactly where no draw decides (greedy, or one candidate left). Ties at the
/// top-p cut are all kept (the CPU keeps them in id order until the mass is reached).
void sample_cuda(const SamplerCudaArgs& args, cudaStream_t stream);

}  // namespace izwi
