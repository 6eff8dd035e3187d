#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_attention_cuda.h"

namespace izwi {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTile = 64;  // keys per pass: scores of a tile stay in shared memory

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

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

// The sequence holding flattened row `token`, or -1 (binary search over the ordered offsets).
__device__ int find_seq(const AttentionSeq* seqs, int num_seqs, int64_t token) {
  int lo = 0, hi = num_seqs - 1, found = -1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    if (seqs[mid].offset <= token) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found >= 0 && token >= seqs[found].offset + seqs[found].length) return -1;
  return found;
}

// One block per (query row, kv head) holds the group of query heads that share the kv head, as the
// CPU kernel's work items do, so each key and value row is read once for the whole group. The
// context goes in tiles of kTile keys with an online softmax (running max and sum per head): a tile's
// scores are a warp per key, its values a thread per output element (coalesced rows).
// Shared memory: q and the output accumulators [group, head_dim], scores [group, kTile], and the
// running max, sum and rescale factor per head.
template <typename KV>
__global__ void paged_attention_kernel(PagedAttentionCudaArgs a) {
  extern __shared__ float smem[];
  const int64_t token = blockIdx.x, kv_head = blockIdx.y;
  const int seq_index = find_seq(a.seqs, a.num_seqs, token);
  if (seq_index < 0) return;
  const AttentionSeq s = a.seqs[seq_index];
  const int32_t* table = a.block_tables + seq_index * a.table_stride;
  const int64_t D = a.head_dim, group = a.num_heads / a.num_kv_heads, BS = a.block_size;
  const int64_t visible_end = s.start_pos + (token - s.offset) + 1;
  const int64_t first = a.sliding_window > 0 ? max(int64_t{0}, visible_end - a.sliding_window) : 0;

  float* q_s = smem;
  float* acc = q_s + group * D;
  float* scores = acc + group * D;
  float* run_max = scores + group * kTile;
  float* run_sum = run_max + group;
  float* rescale = run_sum + group;

  const float* q = a.q + (token * a.num_heads + kv_head * group) * D;
  for (int64_t e = threadIdx.x; e < group * D; e += kThreads) {
    q_s[e] = q[e];
    acc[e] = 0.0f;
  }
  for (int64_t g = threadIdx.x; g < group; g += kThreads) {
    run_max[g] = -FLT_MAX;
    run_sum[g] = 0.0f;
  }
  __syncthreads();

  const KV* keys = static_cast<const KV*>(a.key_pool);
  const KV* values = static_cast<const KV*>(a.value_pool);
  const int64_t row_stride = a.num_kv_heads * D, head_offset = kv_head * D;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The tile's key and value rows, looked up in the block table once per tile (64-bit divisions
  // are slow on the GPU) instead of once per element.
  __shared__ const KV* key_rows[kTile];
  __shared__ const KV* value_rows[kTile];

  for (int64_t tile = first; tile < visible_end; tile += kTile) {
    const int n = static_cast<int>(min(static_cast<int64_t>(kTile), visible_end - tile));
    for (int j = threadIdx.x; j < n; j += kThreads) {
      const int64_t position = tile + j;
      const int64_t row = (static_cast<int64_t>(table[position / BS]) * BS + position % BS) * row_stride + head_offset;
      key_rows[j] = keys + row;
      value_rows[j] = values + row;
    }
    __syncthreads();
    for (int j = warp; j < n; j += kWarps) {
      const KV* k = key_rows[j];
      for (int64_t g = 0; g < group; ++g) {
        float sum = 0.0f;
        for (int64_t d = lane; d < D; d += 32) sum += q_s[g * D + d] * to_float(k[d]);
        sum = warp_sum(sum);
        if (lane == 0) scores[g * kTile + j] = sum * a.scale;
      }
    }
    __syncthreads();
    for (int64_t g = warp; g < group; g += kWarps) {
      float* sc = scores + g * kTile;
      float tile_max = -FLT_MAX;
      for (int j = lane; j < n; j += 32) tile_max = fmaxf(tile_max, sc[j]);
      const float new_max = fmaxf(run_max[g], warp_max(tile_max));
      float tile_sum = 0.0f;
      for (int j = lane; j < n; j += 32) {
        sc[j] = expf(sc[j] - new_max);
        tile_sum += sc[j];
      }
      tile_sum = warp_sum(tile_sum);
      if (lane == 0) {
        const float factor = expf(run_max[g] - new_max);
        rescale[g] = factor;
        run_sum[g] = run_sum[g] * factor + tile_sum;
        run_max[g] = new_max;
      }
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < group * D; e += kThreads) {
      const int64_t g = e / D, d = e % D;
      float sum = acc[e] * rescale[g];
      for (int j = 0; j < n; ++j) sum += scores[g * kTile + j] * to_float(value_rows[j][d]);
      acc[e] = sum;
    }
    __syncthreads();
  }

  float* out = a.out + (token * a.num_heads + kv_head * group) * D;
  for (int64_t e = threadIdx.x; e < group * D; e += kThreads) out[e] = acc[e] / run_sum[e / D];
}

template <typename KV>
void launch(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  const int64_t group = a.num_heads / a.num_kv_heads;
  const size_t smem = static_cast<size_t>(2 * group * a.head_dim + group * kTile + 3 * group) * sizeof(float);
  // Past the 48 KiB default a kernel must opt in (sm_80: up to 163 KiB, sm_90: 227 KiB).
  if (smem > 48 * 1024) {
    check_cuda(cudaFuncSetAttribute(paged_attention_kernel<KV>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)),
               "paged_attention_kernel: shared memory");
  }
  const dim3 grid(static_cast<unsigned>(a.num_tokens), static_cast<unsigned>(a.num_kv_heads));
  paged_attention_kernel<KV><<<grid, kThreads, smem, stream>>>(a);
  check_launch("paged_attention_kernel");
}

}  // namespace

void paged_attention_cuda(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  const char* name = "paged_attention_kernel";
  require(a.num_kv_heads > 0 && a.num_heads % a.num_kv_heads == 0, name,
          "num_heads must be a multiple of num_kv_heads");
  require(a.head_dim > 0 && a.block_size > 0, name, "head_dim and block_size must be positive");
  require(a.num_tokens <= 2147483647 && a.num_kv_heads <= 65535, name, "grid too large");
  if (a.num_tokens == 0 || a.num_seqs == 0) return;
  switch (a.kv_dtype) {
    case KvDtype::Float32:
      launch<float>(a, stream);
      break;
    case KvDtype::BFloat16:
      launch<__nv_bfloat16>(a, stream);
      break;
    case KvDtype::Float16:
      launch<__half>(a, stream);
      break;
  }
}

}  // namespace izwi
