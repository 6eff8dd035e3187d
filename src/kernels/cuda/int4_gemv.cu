#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/int4_gemv_cuda.h"
#include "kernels/cuda/launch_grid.h"

namespace izwi {

namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kColumnsPerLane = 32;  // 16 bytes of packed values

// x [tokens, in] -> gathered [tokens, in] float32 with gathered[t, k] = x[t, column_order[k]].
__global__ void gather_columns_kernel(const __nv_bfloat16* __restrict__ x, const int64_t* __restrict__ order,
                                      float* __restrict__ gathered, int64_t tokens, int64_t in) {
  const int64_t n = tokens * in;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / in, k = i % in;
    gathered[i] = __bfloat162float(x[t * in + order[k]]);
  }
}

// One warp per output row o; lane l takes columns [32 (l + 32 j), 32 (l + 32 j) + 32) for j = 0, 1, ...
// Every 32 columns lie in one group (group_size % 32 == 0), so a lane's chunk has one scale and zero.
template <typename X, int Tokens>
__global__ void int4_gemv_kernel(const X* __restrict__ x, Int4Weights w, const __nv_bfloat16* __restrict__ bias,
                                 __nv_bfloat16* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (o >= w.out) return;
  const int64_t groups = w.in / w.group_size;
  const uint8_t* row = w.values + o * (w.in / 2);
  float acc[Tokens] = {};
  for (int64_t c = static_cast<int64_t>(lane) * kColumnsPerLane; c < w.in; c += 32 * kColumnsPerLane) {
    const uint4 packed = *reinterpret_cast<const uint4*>(row + c / 2);
    const int64_t g = c / w.group_size;
    const float scale = w.scales[o * groups + g];
    const float zero = w.zeros != nullptr ? static_cast<float>(w.zeros[o * groups + g]) : 8.0f;
    const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
    float weight[kColumnsPerLane];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        // Byte b of the row holds columns 2b (low nibble) and 2b + 1 (high): little-endian words
        // put byte j / 2 of a word at bits [8 (j / 2), 8 (j / 2) + 8).
        weight[8 * i + j] = (static_cast<float>((words[i] >> (4 * j)) & 15u) - zero) * scale;
      }
    }
#pragma unroll
    for (int t = 0; t < Tokens; ++t) {
      const X* xs = x + t * w.in + c;
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kColumnsPerLane; ++k) sum += weight[k] * to_float(xs[k]);
      acc[t] += sum;
    }
  }
#pragma unroll
  for (int t = 0; t < Tokens; ++t) {
    float v = acc[t];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0) {
      if (bias != nullptr) v += __bfloat162float(bias[o]);
      y[t * w.out + o] = __float2bfloat16_rn(v);
    }
  }
}

template <typename X, int Tokens>
void launch_rows(const X* x, const Int4Weights& w, const __nv_bfloat16* bias, __nv_bfloat16* y, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((w.out + kWarpsPerBlock - 1) / kWarpsPerBlock);
  int4_gemv_kernel<X, Tokens><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(x, w, bias, y);
  check_launch("int4_gemv_kernel");
}

// Tokens as a template argument keeps the accumulators in registers.
template <typename X>
void launch(const X* x, const Int4Weights& w, const __nv_bfloat16* bias, __nv_bfloat16* y, int64_t tokens,
            cudaStream_t stream) {
  switch (tokens) {
    case 1:
      return launch_rows<X, 1>(x, w, bias, y, stream);
    case 2:
      return launch_rows<X, 2>(x, w, bias, y, stream);
    case 3:
      return launch_rows<X, 3>(x, w, bias, y, stream);
    case 4:
      return launch_rows<X, 4>(x, w, bias, y, stream);
    case 5:
      return launch_rows<X, 5>(x, w, bias, y, stream);
    case 6:
      return launch_rows<X, 6>(x, w, bias, y, stream);
    case 7:
      return launch_rows<X, 7>(x, w, bias, y, stream);
    default:
      return launch_rows<X, 8>(x, w, bias, y, stream);
  }
}

}  // namespace

size_t int4_linear_workspace_bytes(const Int4Weights& w, int64_t tokens) {
  return w.column_order != nullptr ? static_cast<size_t>(std::min(tokens, kInt4GemvMaxTokens) * w.in) * sizeof(float)
                                   : 0;
}

void int4_linear_cuda(const __nv_bfloat16* x, const Int4Weights& w, const __nv_bfloat16* bias, __nv_bfloat16* y,
                      int64_t tokens, float* workspace, cudaStream_t stream) {
  constexpr const char* kName = "int4_linear_cuda";
  require(w.out > 0 && w.in > 0 && tokens >= 0, kName, "out > 0, in > 0 and tokens >= 0");
  require(w.in % kColumnsPerLane == 0 && w.group_size > 0 && w.group_size % kColumnsPerLane == 0 &&
              w.in % w.group_size == 0,
          kName, "in and group_size must be multiples of 32, group_size dividing in");
  require(reinterpret_cast<uintptr_t>(w.values) % 16 == 0, kName, "values must be 16-byte aligned");
  require(w.column_order == nullptr || workspace != nullptr, kName, "act-order weights need the workspace");
  for (int64_t t0 = 0; t0 < tokens; t0 += kInt4GemvMaxTokens) {
    const int64_t n = std::min(kInt4GemvMaxTokens, tokens - t0);
    const __nv_bfloat16* xs = x + t0 * w.in;
    __nv_bfloat16* ys = y + t0 * w.out;
    if (w.column_order == nullptr) {
      launch(xs, w, bias, ys, n, stream);
      continue;
    }
    constexpr int kThreads = 256;
    gather_columns_kernel<<<grid_stride_blocks(n * w.in, kThreads), kThreads, 0, stream>>>(xs, w.column_order,
                                                                                           workspace, n, w.in);
    check_launch("gather_columns_kernel");
    launch(static_cast<const float*>(workspace), w, bias, ys, n, stream);
  }
}

}  // namespace izwi
