#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cfloat>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/online_softmax.cuh"
#include "kernels/cuda/paged_attention_cuda.h"

namespace izwi {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTile = 64;  // keys per pass: scores of a tile stay in shared memory
// A block holds up to this many query vectors (rows x group heads) of head_dim floats, twice (the
// queries and the output accumulators): 64 KiB, within what sm_80 and sm_90 give one block.
constexpr int64_t kMaxQueryFloats = 8192;

// One block per (R consecutive query rows of one sequence, kv head) holds the rows' query heads
// that share the kv head: the group of a decode row (R = 1, as the CPU kernel's work items), or R
// rows of a prefill chunk, so each key and value row read serves R x group query heads. The context
// goes in tiles of kTile keys with an online softmax (running max and sum per query head); keys a
// row may not see (after it, or before its sliding window) score -inf. A tile's scores are a warp
// per key, its values a thread per output element (coalesced rows).
// Shared memory: queries and output accumulators [heads, head_dim], scores [heads, kTile], and the
// running max, sum and rescale factor per head, where heads = rows x group. T: q and out (float or
// bf16), read widened and written rounded once.
template <typename T, typename KV, int R>
__global__ void paged_attention_kernel(PagedAttentionCudaArgs a, int64_t tiles_per_seq) {
  extern __shared__ float smem[];
  __shared__ const KV* key_rows[kTile];
  __shared__ const KV* value_rows[kTile];
  const int64_t seq_index = blockIdx.x / tiles_per_seq, row0 = (blockIdx.x % tiles_per_seq) * R;
  const DeviceSeq s = a.seqs[seq_index];
  if (row0 >= s.length) return;
  const int64_t kv_head = blockIdx.y, D = a.head_dim, group = a.num_heads / a.num_kv_heads, BS = a.block_size;
  const int64_t heads = min(static_cast<int64_t>(R), s.length - row0) * group;
  const int32_t* table = a.block_tables + seq_index * a.table_stride;
  // Query row r sits at start_pos + row0 + r and sees keys [first(r), position + 1).
  const int64_t position0 = s.start_pos + row0;
  auto first_key = [&](int64_t r) {
    return a.sliding_window > 0 ? max(int64_t{0}, position0 + r + 1 - a.sliding_window) : int64_t{0};
  };
  const int64_t context_end = position0 + heads / group;

  float* q_s = smem;
  float* acc = q_s + heads * D;
  float* scores = acc + heads * D;
  float* run_max = scores + heads * kTile;
  float* run_sum = run_max + heads;
  float* rescale = run_sum + heads;

  // Head h is query head h % group of the kv head's group, in row h / group.
  auto query_offset = [&](int64_t h) {
    return ((s.offset + row0 + h / group) * a.num_heads + kv_head * group + h % group) * D;
  };
  for (int64_t e = threadIdx.x; e < heads * D; e += kThreads) {
    q_s[e] = to_float(static_cast<const T*>(a.q)[query_offset(e / D) + e % D]);
    acc[e] = 0.0f;
  }
  for (int64_t h = threadIdx.x; h < heads; h += kThreads) {
    run_max[h] = -FLT_MAX;  // finite: a tile a row sees none of leaves its sums untouched
    run_sum[h] = 0.0f;
  }

  const KV* keys = static_cast<const KV*>(a.key_pool);
  const KV* values = static_cast<const KV*>(a.value_pool);
  const int64_t row_stride = a.num_kv_heads * D, head_offset = kv_head * D;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  for (int64_t tile = first_key(0); tile < context_end; tile += kTile) {
    const int n = static_cast<int>(min(static_cast<int64_t>(kTile), context_end - tile));
    // The tile's rows, looked up in the block table once per tile (64-bit divisions are slow).
    for (int j = threadIdx.x; j < n; j += kThreads) {
      const int64_t position = tile + j;
      const int64_t row = (static_cast<int64_t>(table[position / BS]) * BS + position % BS) * row_stride + head_offset;
      key_rows[j] = keys + row;
      value_rows[j] = values + row;
    }
    __syncthreads();
    for (int j = warp; j < n; j += kWarps) {
      const KV* k = key_rows[j];
      const int64_t position = tile + j;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t r = h / group;
        float score = -INFINITY;
        if (position <= position0 + r && position >= first_key(r)) {
          float sum = 0.0f;
          for (int64_t d = lane; d < D; d += 32) sum += q_s[h * D + d] * to_float(k[d]);
          score = warp_sum(sum) * a.scale;
        }
        if (lane == 0) scores[h * kTile + j] = score;
      }
    }
    __syncthreads();
    online_softmax_tile<kTile, kWarps>(scores, static_cast<int>(heads), n, run_max, run_sum, rescale, warp, lane);
    __syncthreads();
    for (int64_t e = threadIdx.x; e < heads * D; e += kThreads) {
      const int64_t h = e / D, d = e % D;
      float sum = acc[e] * rescale[h];
      for (int j = 0; j < n; ++j) sum += scores[h * kTile + j] * to_float(value_rows[j][d]);
      acc[e] = sum;
    }
    __syncthreads();
  }

  for (int64_t e = threadIdx.x; e < heads * D; e += kThreads)
    static_cast<T*>(a.out)[query_offset(e / D) + e % D] = from_float<T>(acc[e] / run_sum[e / D]);
}

template <typename T, typename KV, int R>
void launch(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  const int64_t heads = R * (a.num_heads / a.num_kv_heads);
  const size_t smem = static_cast<size_t>(2 * heads * a.head_dim + heads * kTile + 3 * heads) * sizeof(float);
  // Past the 48 KiB default a kernel must opt in (sm_80: up to 163 KiB, sm_90: 227 KiB).
  if (smem > 48 * 1024) {
    check_cuda(cudaFuncSetAttribute(paged_attention_kernel<T, KV, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)),
               "paged_attention_kernel: shared memory");
  }
  const int64_t tiles_per_seq = (a.max_length + R - 1) / R;
  require(a.num_seqs * tiles_per_seq <= 2147483647, "paged_attention_kernel", "grid too large");
  const dim3 grid(static_cast<unsigned>(a.num_seqs * tiles_per_seq), static_cast<unsigned>(a.num_kv_heads));
  paged_attention_kernel<T, KV, R><<<grid, kThreads, smem, stream>>>(a, tiles_per_seq);
  check_launch("paged_attention_kernel");
}

// Decode (one row per sequence) takes one row per block; longer chunks as many rows as fit.
template <typename T, typename KV>
void launch_rows(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  const int64_t group_floats = a.num_heads / a.num_kv_heads * a.head_dim;
  if (a.max_length >= 8 && 8 * group_floats <= kMaxQueryFloats) {
    launch<T, KV, 8>(a, stream);
  } else if (a.max_length >= 4 && 4 * group_floats <= kMaxQueryFloats) {
    launch<T, KV, 4>(a, stream);
  } else if (a.max_length >= 2 && 2 * group_floats <= kMaxQueryFloats) {
    launch<T, KV, 2>(a, stream);
  } else {
    launch<T, KV, 1>(a, stream);
  }
}

template <typename T>
void launch_pools(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  switch (a.kv_dtype) {
    case KvDtype::Float32:
      launch_rows<T, float>(a, stream);
      break;
    case KvDtype::BFloat16:
      launch_rows<T, __nv_bfloat16>(a, stream);
      break;
    case KvDtype::Float16:
      launch_rows<T, __half>(a, stream);
      break;
  }
}

}  // namespace

void paged_attention_cuda(const PagedAttentionCudaArgs& a, cudaStream_t stream) {
  const char* name = "paged_attention_kernel";
  require(a.num_kv_heads > 0 && a.num_heads % a.num_kv_heads == 0, name,
          "num_heads must be a multiple of num_kv_heads");
  require(a.head_dim > 0 && a.block_size > 0, name, "head_dim and block_size must be positive");
  require(a.num_kv_heads <= 65535, name, "more kv heads than a grid column holds");
  require(a.activation_dtype != ElementDtype::Float16, name, "activation_dtype must be Float32 or BFloat16");
  if (a.num_seqs == 0 || a.max_length <= 0) return;
  if (a.activation_dtype == ElementDtype::BFloat16) {
    launch_pools<__nv_bfloat16>(a, stream);
  } else {
    launch_pools<float>(a, stream);
  }
}

}  // namespace izwi
