#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/rms_norm_cuda.h"

namespace izwi {

namespace {

constexpr int kThreads = 256;

// One block per row: the sum of squares is a block reduction, then a second pass scales. The
// second pass rereads the row (from L1/L2) instead of holding it, so any dim fits. A thread takes
// packs of N elements (16 bytes of T) at the same offsets in both passes, so x, residual and y may
// alias one another. T is the storage of x, residual and y (float32 math), W the weights'.
template <typename T, typename W>
__global__ void rms_norm_kernel(const T* x, T* residual, const W* __restrict__ weight, T* y, int64_t dim, float eps) {
  constexpr int N = kPack<T>;
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float scale;
  const int64_t row = blockIdx.x;
  const T* xr = x + row * dim;
  T* rr = residual != nullptr ? residual + row * dim : nullptr;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x * static_cast<int64_t>(N); i < dim; i += kThreads * N) {
    const int n = static_cast<int>(min(static_cast<int64_t>(N), dim - i));
    float v[N] = {};
    load_floats(xr + i, n, v);
    if (rr != nullptr) {
      float r[N] = {};
      load_floats(rr + i, n, r);
      // The norm is of the sum as stored (rounded to T), as residual.add_(x) then the norm would be.
#pragma unroll
      for (int k = 0; k < N; ++k) v[k] = to_float(from_float<T>(v[k] + r[k]));
      store_floats(rr + i, n, v);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) sum += v[k] * v[k];  // lanes k >= n hold 0
  }
  sum = Reduce(storage).Sum(sum);
  if (threadIdx.x == 0) scale = 1.0f / sqrtf(sum / static_cast<float>(dim) + eps);
  __syncthreads();
  const T* src = rr != nullptr ? rr : xr;
  T* yr = y + row * dim;
  for (int64_t i = threadIdx.x * static_cast<int64_t>(N); i < dim; i += kThreads * N) {
    const int n = static_cast<int>(min(static_cast<int64_t>(N), dim - i));
    float v[N] = {}, w[N] = {};
    load_floats(src + i, n, v);
    load_floats(weight + i, n, w);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = w[k] * (v[k] * scale);
    store_floats(yr + i, n, v);
  }
}

template <typename T, typename W>
void launch(const T* x, T* residual, const W* weight, T* y, int64_t rows, int64_t dim, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  require(rows <= 2147483647, "rms_norm_kernel", "more rows than a grid holds");
  rms_norm_kernel<T, W><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, residual, weight, y, dim, eps);
  check_launch("rms_norm_kernel");
}

}  // namespace

void rms_norm_cuda(const float* x, float* residual, const float* weight, float* y, int64_t rows, int64_t dim, float eps,
                   cudaStream_t stream) {
  launch(x, residual, weight, y, rows, dim, eps, stream);
}

void rms_norm_cuda(const __nv_bfloat16* x, __nv_bfloat16* residual, const float* weight, __nv_bfloat16* y, int64_t rows,
                   int64_t dim, float eps, cudaStream_t stream) {
  launch(x, residual, weight, y, rows, dim, eps, stream);
}

void rms_norm_cuda(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* y,
                   int64_t rows, int64_t dim, float eps, cudaStream_t stream) {
  launch(x, residual, weight, y, rows, dim, eps, stream);
}

}  // namespace izwi
