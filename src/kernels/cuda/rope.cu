#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/rope_cuda.h"

namespace izwi {

namespace {

// One thread per rotated pair (row, i): the two halves x1[i], x2[i] of a head.
template <bool kTables>
__global__ void rope_kernel(float* __restrict__ x, const int64_t* __restrict__ positions,
                            const float* __restrict__ cos_table, const float* __restrict__ sin_table,
                            const float* __restrict__ inv_freq, int64_t pairs, int64_t heads, int64_t half) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < pairs;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / half, i = e % half;
    const int64_t pos = positions[row / heads];
    float c, s;
    if constexpr (kTables) {
      c = cos_table[pos * half + i];
      s = sin_table[pos * half + i];
    } else {
      // Float product then cosf/sinf, as at::outer(positions.to(kFloat), inv_freq).cos().
      const float angle = static_cast<float>(pos) * inv_freq[i];
      c = cosf(angle);
      s = sinf(angle);
    }
    float* x1 = x + row * 2 * half;
    const float a = x1[i], b = x1[half + i];
    x1[i] = a * c - b * s;
    x1[half + i] = b * c + a * s;
  }
}

template <bool kTables>
void launch(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, const float* inv_freq,
            int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream, const char* name) {
  require(head_dim % 2 == 0, name, "head_dim must be even");
  const int64_t half = head_dim / 2, pairs = tokens * heads * half;
  if (pairs == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((pairs + kThreads - 1) / kThreads, 65535);
  rope_kernel<kTables><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, positions, cos_table, sin_table,
                                                                               inv_freq, pairs, heads, half);
  check_launch(name);
}

}  // namespace

void rope_cuda(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
               int64_t heads, int64_t head_dim, cudaStream_t stream) {
  launch<true>(x, positions, cos_table, sin_table, nullptr, tokens, heads, head_dim, stream, "rope_kernel<tables>");
}

void rope_angles_cuda(float* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream) {
  launch<false>(x, positions, nullptr, nullptr, inv_freq, tokens, heads, head_dim, stream, "rope_kernel<angles>");
}

}  // namespace izwi
