#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// rope_cpu on device pointers: rotates x [tokens, heads, head_dim] in place (rotate-half);
/// row t uses cos/sin_table[positions[t]], tables of shape [max_positions, head_dim / 2].
void rope_cuda(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
               int64_t heads, int64_t head_dim, cudaStream_t stream);

/// The same rotation with the angles computed on the fly, as RotaryEmbedding without tables:
/// angle = float(positions[t]) * inv_freq[i], inv_freq of head_dim / 2 floats.
void rope_angles_cuda(float* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream);

}  // namespace izwi
