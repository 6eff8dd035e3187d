#include <algorithm>
#include <type_traits>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/rope_angles.cuh"
#include "kernels/cuda/rope_cuda.h"

namespace izwi {

namespace {

// One thread per N consecutive rotated pairs (row, i .. i + N) of a head: x1[i..] and x2[i..] (the
// two halves) are loaded as 16-byte packs where aligned. T is x's storage (float32 math), C the
// tables' (or, with inv_freq, what the angles are rounded to).
template <typename T, typename C>
__global__ void rope_kernel(T* __restrict__ x, const int64_t* __restrict__ positions, const C* __restrict__ cos_table,
                            const C* __restrict__ sin_table, const float* __restrict__ inv_freq, int64_t units,
                            int64_t heads, int64_t half) {
  constexpr int N = kPack<T>;
  const int64_t chunks = (half + N - 1) / N;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < units;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / chunks, i0 = e % chunks * N;
    const int n = static_cast<int>(min(static_cast<int64_t>(N), half - i0));
    const int64_t pos = positions[row / heads];
    T* x1 = x + row * 2 * half + i0;
    float a[N] = {}, b[N] = {};
    load_floats(x1, n, a);
    load_floats(x1 + half, n, b);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (k >= n) break;
      float c, s;
      rope_cos_sin(cos_table, sin_table, inv_freq, std::is_same_v<C, __nv_bfloat16>, pos, half, i0 + k, c, s);
      const float ak = a[k], bk = b[k];
      a[k] = ak * c - bk * s;
      b[k] = bk * c + ak * s;
    }
    store_floats(x1, n, a);
    store_floats(x1 + half, n, b);
  }
}

template <typename T, typename C>
void launch(T* x, const int64_t* positions, const C* cos_table, const C* sin_table, const float* inv_freq,
            int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream, const char* name) {
  require(head_dim % 2 == 0, name, "head_dim must be even");
  constexpr int N = kPack<T>;
  const int64_t half = head_dim / 2, units = tokens * heads * ((half + N - 1) / N);
  if (units == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((units + kThreads - 1) / kThreads, 65535);
  rope_kernel<T, C><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, positions, cos_table, sin_table,
                                                                            inv_freq, units, heads, half);
  check_launch(name);
}

}  // namespace

void rope_cuda(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
               int64_t heads, int64_t head_dim, cudaStream_t stream) {
  launch(x, positions, cos_table, sin_table, nullptr, tokens, heads, head_dim, stream, "rope_kernel<tables>");
}

void rope_cuda(__nv_bfloat16* x, const int64_t* positions, const float* cos_table, const float* sin_table,
               int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream) {
  launch(x, positions, cos_table, sin_table, nullptr, tokens, heads, head_dim, stream, "rope_kernel<bf16, tables>");
}

void rope_cuda(__nv_bfloat16* x, const int64_t* positions, const __nv_bfloat16* cos_table,
               const __nv_bfloat16* sin_table, int64_t tokens, int64_t heads, int64_t head_dim, cudaStream_t stream) {
  launch(x, positions, cos_table, sin_table, nullptr, tokens, heads, head_dim, stream,
         "rope_kernel<bf16, bf16 tables>");
}

void rope_angles_cuda(float* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream) {
  launch<float, float>(x, positions, nullptr, nullptr, inv_freq, tokens, heads, head_dim, stream,
                       "rope_kernel<angles>");
}

void rope_angles_cuda(__nv_bfloat16* x, const int64_t* positions, const float* inv_freq, int64_t tokens, int64_t heads,
                      int64_t head_dim, cudaStream_t stream) {
  launch<__nv_bfloat16, __nv_bfloat16>(x, positions, nullptr, nullptr, inv_freq, tokens, heads, head_dim, stream,
                                       "rope_kernel<bf16, angles>");
}

}  // namespace izwi
