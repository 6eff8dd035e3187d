#pragma once
// Device-side sampling: one row of logits per request to one token id, with the CPU Sampler's
// processors in its order (repetition penalty, suppression, min-tokens EOS suppression,
// temperature, top-k keeping ties with the k-th logit, top-p, then a draw or argmax). Only the ids
// are written, so a step copies back rows * 4 bytes instead of its logits.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/sampling_params_cuda.h"

namespace izwi {

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
