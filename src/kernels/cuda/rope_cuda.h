#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// rope_cpu on device pointers: rotates x [tokens, heads, head_dim] in place (rotate-half);
/// row t uses cos/sin_table[positions[t]], tables of shape [max_positions, head_dim / 2].
/// bf16 x: float32 math, each element rounded once to bf16; tables in float32 or bf16.
void rope_cuda(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
               int64_t heads, int64_t head_dim, cudaStream_t stream);
void rope_cuda(__nv_bfloat16* x, const int64_t* positions, const float* cos_table, const float* sin_table,
               int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream);
void rope_cuda(__nv_bfloat16* x, const int64_t* positions, const __nv_bfloat16* cos_table,
               const __nv_bfloat16* sin_table, int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream);

/// The same rotation with the angles computed on the fly, as RotaryEmbedding without tables:
/// angle = float(positions[t]) * inv_freq[i], inv_freq of head_dim / 2 floats. For bf16 x the
/// cos and sin are rounded to bf16 first, as a bf16 model's tables (RopeAngles::dtype) are.
void rope_angles_cuda(float* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream);
void rope_angles_cuda(__nv_bfloat16* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream);

}  // namespace izwi
