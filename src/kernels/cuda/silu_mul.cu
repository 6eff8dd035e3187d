#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/silu_mul_cuda.h"

#include <algorithm>

namespace izwi {

namespace {

__global__ void silu_mul_kernel(const float* __restrict__ gate_up, float* __restrict__ out, int64_t total,
                                int64_t width) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e / width, i = e % width;
    const float g = gate_up[t * 2 * width + i];
    out[e] = g / (1.0f + expf(-g)) * gate_up[t * 2 * width + width + i];
  }
}

}  // namespace

void silu_mul_cuda(const float* gate_up, float* out, int64_t tokens, int64_t width, cudaStream_t stream) {
  const int64_t total = tokens * width;
  if (total == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65535);
  silu_mul_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(gate_up, out, total, width);
  check_launch("silu_mul_kernel");
}

}  // namespace izwi
