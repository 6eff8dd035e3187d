#pragma once
// Warp reductions and the online-softmax update of one tile of attention scores, shared by the
// paged attention kernels (chunked prefill and split-K decode) and the attention inputs' norm.

#include <cuda_runtime.h>

#include <cmath>

namespace izwi {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// One tile of `n` scores per head (`scores` [heads, kTile], every score visible), a warp per
/// head: each score becomes exp(score - the new running max), the running sum takes the tile's,
/// and `rescale[h]` is the factor the head's output accumulator must be multiplied by.
template <int kTile, int kWarps>
__device__ __forceinline__ void online_softmax_tile(float* scores, int heads, int n, float* run_max, float* run_sum,
                                                    float* rescale, int warp, int lane) {
  for (int h = warp; h < heads; h += kWarps) {
    float* sc = scores + h * kTile;
    float tile_max = -INFINITY;
    for (int j = lane; j < n; j += 32) tile_max = fmaxf(tile_max, sc[j]);
    const float new_max = fmaxf(run_max[h], warp_max(tile_max));
    float tile_sum = 0.0f;
    for (int j = lane; j < n; j += 32) {
      sc[j] = expf(sc[j] - new_max);
      tile_sum += sc[j];
    }
    tile_sum = warp_sum(tile_sum);
    if (lane == 0) {
      const float factor = expf(run_max[h] - new_max);
      rescale[h] = factor;
      run_sum[h] = run_sum[h] * factor + tile_sum;
      run_max[h] = new_max;
    }
  }
}

}  // namespace izwi
