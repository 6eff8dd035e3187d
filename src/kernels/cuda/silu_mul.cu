#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/silu_mul_cuda.h"

namespace izwi {

namespace {

// One thread per N consecutive outputs of a token (16 bytes of T): gate, up and out as packs
// where aligned, element by element at a row's unaligned start or tail. Float32 math.
template <typename T>
__global__ void silu_mul_kernel(const T* __restrict__ gate_up, T* __restrict__ out, int64_t units, int64_t width) {
  constexpr int N = kPack<T>;
  const int64_t chunks = (width + N - 1) / N;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < units;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e / chunks, i = e % chunks * N;
    const int n = static_cast<int>(min(static_cast<int64_t>(N), width - i));
    const T* gate = gate_up + t * 2 * width + i;
    float g[N] = {}, u[N] = {};
    load_floats(gate, n, g);
    load_floats(gate + width, n, u);
#pragma unroll
    for (int k = 0; k < N; ++k) g[k] = g[k] / (1.0f + expf(-g[k])) * u[k];
    store_floats(out + t * width + i, n, g);
  }
}

template <typename T>
void launch(const T* gate_up, T* out, int64_t tokens, int64_t width, cudaStream_t stream) {
  constexpr int N = kPack<T>;
  const int64_t units = tokens * ((width + N - 1) / N);
  if (units == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((units + kThreads - 1) / kThreads, 65535);
  silu_mul_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(gate_up, out, units, width);
  check_launch("silu_mul_kernel");
}

}  // namespace

void silu_mul_cuda(const float* gate_up, float* out, int64_t tokens, int64_t width, cudaStream_t stream) {
  launch(gate_up, out, tokens, width, stream);
}

void silu_mul_cuda(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int64_t tokens, int64_t width,
                   cudaStream_t stream) {
  launch(gate_up, out, tokens, width, stream);
}

}  // namespace izwi
