#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/rms_norm_cuda.h"

namespace izwi {

namespace {

constexpr int kThreads = 256;

// One block per row: the sum of squares is a block reduction, then a second pass scales. The
// second pass rereads the row (from L1/L2) instead of holding it, so any dim fits.
__global__ void rms_norm_kernel(const float* x, float* residual, const float* __restrict__ weight, float* y,
                                int64_t dim, float eps) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float scale;
  const int64_t row = blockIdx.x;
  const float* xr = x + row * dim;
  float* rr = residual != nullptr ? residual + row * dim : nullptr;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) {
    float v = xr[i];
    if (rr != nullptr) {
      v += rr[i];
      rr[i] = v;
    }
    sum += v * v;
  }
  sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) scale = 1.0f / sqrtf(sum / static_cast<float>(dim) + eps);
  __syncthreads();
  const float* src = rr != nullptr ? rr : xr;
  float* yr = y + row * dim;
  // Each thread touches the same elements in both passes: no barrier for `src`, and y may alias x.
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) yr[i] = weight[i] * (src[i] * scale);
}

}  // namespace

void rms_norm_cuda(const float* x, float* residual, const float* weight, float* y, int64_t rows, int64_t dim, float eps,
                   cudaStream_t stream) {
  if (rows == 0) return;
  require(rows <= 2147483647, "rms_norm_kernel", "more rows than a grid holds");
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, residual, weight, y, dim, eps);
  check_launch("rms_norm_kernel");
}

}  // namespace izwi
