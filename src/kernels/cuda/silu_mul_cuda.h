#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// out[t, i] = silu(gate_up[t, i]) * gate_up[t, width + i], as silu_mul_cpu (device pointers).
/// bf16: float32 math, each output rounded once to bf16.
void silu_mul_cuda(const float* gate_up, float* out, int64_t tokens, int64_t width, cudaStream_t stream);
void silu_mul_cuda(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int64_t tokens, int64_t width,
                   cudaStream_t stream);

}  // namespace izwi
