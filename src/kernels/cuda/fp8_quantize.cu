#include <cub/block/block_reduce.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fp8_quantize_cuda.h"

namespace izwi {

namespace {

constexpr int kThreads = 256;
constexpr float kE4m3Max = 448.0f;
// The smallest scale (vLLM's floor): below it 1 / scale would overflow to inf for the tiniest
// magnitudes, and a zero times inf is NaN.
constexpr float kMinScale = 1.0f / (kE4m3Max * 512.0f);

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// One block per row: max |x| over the row's finite values (an inf or NaN must not set the scale of
// the values beside it), then the row quantized with its scale.
__global__ void quantize_rows_kernel(const __nv_bfloat16* __restrict__ x, int64_t in, __nv_fp8_e4m3* __restrict__ out,
                                     float* __restrict__ scales) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float row_scale;
  const int64_t row = blockIdx.x;
  const __nv_bfloat16* xr = x + row * in;
  float m = 0.0f;
  for (int64_t k = threadIdx.x; k < in; k += kThreads) {
    const float v = fabsf(__bfloat162float(xr[k]));
    if (isfinite(v)) m = fmaxf(m, v);
  }
  const float amax = Reduce(storage).Reduce(m, MaxOp());
  if (threadIdx.x == 0) {
    row_scale = amax > 0.0f ? fmaxf(amax / kE4m3Max, kMinScale) : 1.0f;
    scales[row] = row_scale;
  }
  __syncthreads();
  const float inverse = 1.0f / row_scale;
  __nv_fp8_e4m3* yr = out + row * in;
  // __nv_fp8_e4m3's constructor rounds to nearest even and saturates (__NV_SATFINITE).
  for (int64_t k = threadIdx.x; k < in; k += kThreads) yr[k] = __nv_fp8_e4m3(__bfloat162float(xr[k]) * inverse);
}

}  // namespace

void quantize_fp8_rows_cuda(const __nv_bfloat16* x, int64_t tokens, int64_t in, __nv_fp8_e4m3* out, float* scales,
                            cudaStream_t stream) {
  require(tokens >= 0 && in > 0, "quantize_fp8_rows_cuda", "tokens >= 0 and in > 0");
  if (tokens == 0) return;
  require(tokens <= 0x7fffffff, "quantize_fp8_rows_cuda", "at most 2^31 - 1 rows (one block each)");
  quantize_rows_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(x, in, out, scales);
  check_launch("quantize_rows_kernel");
}

}  // namespace izwi
