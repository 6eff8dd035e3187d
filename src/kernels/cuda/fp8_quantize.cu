#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fp8_quantize_cuda.h"
#include "kernels/cuda/launch_grid.h"

namespace izwi {

namespace {

constexpr float kE4m3Max = 448.0f;
// The smallest scale (vLLM's floor): below it 1 / scale would overflow to inf for the tiniest
// magnitudes, and a zero times inf is NaN.
constexpr float kMinScale = 1.0f / (kE4m3Max * 512.0f);

// max |x| over the tensor's finite values: a grid-stride max per thread, a warp reduction, one
// atomic per warp (non-negative floats order as their bits do, so an integer atomicMax works). The
// scale is one for the whole batch, so an inf or NaN in one sequence's row must not set it: that
// row saturates (or stays NaN) alone instead of every row becoming NaN.
__global__ void amax_kernel(const __nv_bfloat16* __restrict__ x, int64_t n, float* amax) {
  float m = 0.0f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = fabsf(__bfloat162float(x[i]));
    if (isfinite(v)) m = fmaxf(m, v);
  }
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<int*>(amax), __float_as_int(m));
}

__global__ void scale_from_amax_kernel(const float* amax, float* scale) {
  *scale = *amax > 0.0f ? fmaxf(*amax / kE4m3Max, kMinScale) : 1.0f;
}

__global__ void quantize_kernel(const __nv_bfloat16* __restrict__ x, int64_t n, const float* scale,
                                __nv_fp8_e4m3* __restrict__ out) {
  const float inverse = 1.0f / *scale;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // __nv_fp8_e4m3's constructor rounds to nearest even and saturates (__NV_SATFINITE).
    out[i] = __nv_fp8_e4m3(__bfloat162float(x[i]) * inverse);
  }
}

}  // namespace

void quantize_fp8_dynamic_cuda(const __nv_bfloat16* x, int64_t n, __nv_fp8_e4m3* out, float* scale, float* amax_scratch,
                               cudaStream_t stream) {
  require(n >= 0, "quantize_fp8_dynamic_cuda", "negative element count");
  check_cuda(cudaMemsetAsync(amax_scratch, 0, sizeof(float), stream), "quantize_fp8_dynamic_cuda: zero amax");
  constexpr int kThreads = 256;
  if (n > 0) {
    amax_kernel<<<grid_stride_blocks(n, kThreads), kThreads, 0, stream>>>(x, n, amax_scratch);
    check_launch("amax_kernel");
  }
  scale_from_amax_kernel<<<1, 1, 0, stream>>>(amax_scratch, scale);
  check_launch("scale_from_amax_kernel");
  quantize_fp8_static_cuda(x, n, scale, out, stream);
}

void quantize_fp8_static_cuda(const __nv_bfloat16* x, int64_t n, const float* scale, __nv_fp8_e4m3* out,
                              cudaStream_t stream) {
  require(n >= 0, "quantize_fp8_static_cuda", "negative element count");
  if (n == 0) return;
  constexpr int kThreads = 256;
  quantize_kernel<<<grid_stride_blocks(n, kThreads), kThreads, 0, stream>>>(x, n, scale, out);
  check_launch("quantize_kernel");
}

}  // namespace izwi
