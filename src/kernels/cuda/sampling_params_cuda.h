#pragma once
// The per-row controls the device sampler reads (kernels/cuda/sampler_cuda.h), apart from the
// kernel's launch declarations so that host code of every build (the staging of a CUDA graph's
// chain of draws, its unit tests) can lay them out without the CUDA headers.

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

}  // namespace izwi
