#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// out[t, i] = silu(gate_up[t, i]) * gate_up[t, width + i], as silu_mul_cpu (device pointers).
void silu_mul_cuda(const float* gate_up, float* out, int64_t tokens, int64_t width, cudaStream_t stream);

}  // namespace izwi
