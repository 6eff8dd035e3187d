#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/online_softmax.cuh"
#include "kernels/cuda/paged_decode_attention_cuda.h"

namespace izwi {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTile = static_cast<int>(kPagedDecodeTile);
constexpr int kHeads = static_cast<int>(kPagedDecodeHeadsPerBlock);
constexpr unsigned kFullMask = 0xffffffffu;

/// 16-byte packs of a K/V row one thread holds: a row of kPagedDecodeMaxHeadDim over one warp.
template <typename KV>
constexpr int kPacksPerThread = static_cast<int>((kPagedDecodeMaxHeadDim / kPack<KV> + 31) / 32);

/// The packs sub, sub + tpk, ... of a row of head_dim elements, as floats (zeros past head_dim).
template <typename KV>
__device__ __forceinline__ void load_row(const KV* row, int head_dim, int packs, int sub, int tpk,
                                         float (&out)[kPacksPerThread<KV> * kPack<KV>]) {
  constexpr int P = kPack<KV>;
#pragma unroll
  for (int r = 0; r < kPacksPerThread<KV>; ++r) {
    const int c = sub + r * tpk;
    float part[P];
#pragma unroll
    for (int e = 0; e < P; ++e) part[e] = 0.0f;
    if (c < packs) load_floats<P>(row + c * P, min(P, head_dim - c * P), part);
#pragma unroll
    for (int e = 0; e < P; ++e) out[r * P + e] = part[e];
  }
}

/// The first key a decode row at `position` sees.
__device__ __forceinline__ int64_t first_key(int64_t position, int64_t sliding_window) {
  return sliding_window > 0 ? max(int64_t{0}, position + 1 - sliding_window) : int64_t{0};
}

// One block per (partition, KV head and chunk of up to kHeads of its query heads, sequence): the
// decode row's keys of the partition, in tiles of kTile with an online softmax. A group of tpk
// threads (the power of two covering a row's 16-byte packs, at most a warp) takes a key: its
// threads load a pack or two each, one vector load, and the group's partial dot products meet in
// shuffles; for values the same group accumulates p * v for its keys in registers, and the groups'
// sums meet once at the end (shuffles within a warp, shared memory across warps). The block writes
// the partition's running max, sum and unnormalised output per head to the workspace.
// Shared memory: queries [kHeads, Dp] (Dp = head_dim rounded up to packs, zeros past head_dim),
// scores [kHeads, kTile], the warps' output sums [kWarps, kHeads, Dp], max, sum and rescale.
template <typename T, typename KV>
__global__ void __launch_bounds__(kThreads)
    paged_decode_attention_kernel(PagedAttentionCudaArgs a, PagedDecodePlan plan, float* ws, int tpk) {
  extern __shared__ float4 smem4[];
  __shared__ int64_t rows[kTile];
  const int64_t seq = blockIdx.z, partition = blockIdx.x;
  const DeviceSeq s = a.seqs[seq];
  if (s.length < 1) return;
  const int64_t position = s.start_pos, P = plan.partition_size;
  const int64_t begin = max(partition * P, first_key(position, a.sliding_window));
  const int64_t end = min((partition + 1) * P, position + 1);
  if (begin >= end) return;  // outside the context or the window: the reduce skips it too

  constexpr int PK = kPack<KV>, PT = kPacksPerThread<KV>;
  const int64_t group = a.num_heads / a.num_kv_heads;
  const int64_t kv_head = blockIdx.y / plan.head_chunks, h0 = blockIdx.y % plan.head_chunks * kHeads;
  const int heads = static_cast<int>(min(static_cast<int64_t>(kHeads), group - h0));
  const int D = static_cast<int>(a.head_dim), packs = (D + PK - 1) / PK, Dp = packs * PK;
  float* q_s = reinterpret_cast<float*>(smem4);
  float* scores = q_s + kHeads * Dp;
  float* warp_out = scores + kHeads * kTile;
  float* run_max = warp_out + kWarps * kHeads * Dp;
  float* run_sum = run_max + kHeads;
  float* rescale = run_sum + kHeads;

  const int64_t first_head = kv_head * group + h0;  // of the block's heads, in q's head order
  const T* q = static_cast<const T*>(a.q) + (s.offset * a.num_heads + first_head) * D;
  for (int e = threadIdx.x; e < heads * Dp; e += kThreads) {
    const int d = e % Dp;
    q_s[e] = d < D ? to_float(q[e / Dp * D + d]) : 0.0f;
  }
  if (threadIdx.x < kHeads) {
    run_max[threadIdx.x] = -FLT_MAX;  // finite, so the first tile's rescale is exp(-huge) = 0
    run_sum[threadIdx.x] = 0.0f;
  }

  const KV* keys = static_cast<const KV*>(a.key_pool);
  const KV* values = static_cast<const KV*>(a.value_pool);
  const int32_t* table = a.block_tables + seq * a.table_stride;
  const int64_t row_stride = a.num_kv_heads * D, head_offset = kv_head * D, BS = a.block_size;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int key_group = threadIdx.x / tpk, sub = threadIdx.x % tpk, key_groups = kThreads / tpk;
  float acc[kHeads][PT * PK];
#pragma unroll
  for (int h = 0; h < kHeads; ++h) {
#pragma unroll
    for (int e = 0; e < PT * PK; ++e) acc[h][e] = 0.0f;
  }

  for (int64_t tile = begin; tile < end; tile += kTile) {
    const int n = static_cast<int>(min(static_cast<int64_t>(kTile), end - tile));
    // The tile's rows, looked up in the block table once (64-bit divisions are slow).
    for (int j = threadIdx.x; j < n; j += kThreads) {
      const int64_t p = tile + j;
      rows[j] = (static_cast<int64_t>(table[p / BS]) * BS + p % BS) * row_stride + head_offset;
    }
    __syncthreads();
    // Scores: every thread of a warp takes part in the shuffles, so the loop is uniform and a
    // group past the tile's end works on zeros.
    for (int j0 = 0; j0 < n; j0 += key_groups) {
      const int j = j0 + key_group;
      float k[PT * PK];
      if (j < n) {
        load_row<KV>(keys + rows[j], D, packs, sub, tpk, k);
      } else {
#pragma unroll
        for (int e = 0; e < PT * PK; ++e) k[e] = 0.0f;
      }
#pragma unroll
      for (int h = 0; h < kHeads; ++h) {
        if (h >= heads) break;  // uniform across the block
        float dot = 0.0f;
#pragma unroll
        for (int r = 0; r < PT; ++r) {
          const int c = sub + r * tpk;
          if (c < packs) {
            const float4* qv = reinterpret_cast<const float4*>(q_s + h * Dp + c * PK);
#pragma unroll
            for (int v = 0; v < PK / 4; ++v) {
              const float4 x = qv[v];
              const float* kk = k + r * PK + v * 4;
              dot += x.x * kk[0] + x.y * kk[1] + x.z * kk[2] + x.w * kk[3];
            }
          }
        }
        for (int o = tpk / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(kFullMask, dot, o);
        if (sub == 0 && j < n) scores[h * kTile + j] = dot * a.scale;
      }
    }
    __syncthreads();
    // Every key of [begin, end) is visible (causality and the window made the range): a warp per
    // head turns its scores into exp(score - running max) and updates the running sum.
    online_softmax_tile<kTile, kWarps>(scores, heads, n, run_max, run_sum, rescale, warp, lane);
    __syncthreads();
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      if (h >= heads) break;
      const float factor = rescale[h];
#pragma unroll
      for (int e = 0; e < PT * PK; ++e) acc[h][e] *= factor;
    }
    for (int j = key_group; j < n; j += key_groups) {
      float v[PT * PK];
      load_row<KV>(values + rows[j], D, packs, sub, tpk, v);
#pragma unroll
      for (int h = 0; h < kHeads; ++h) {
        if (h >= heads) break;
        const float p = scores[h * kTile + j];
#pragma unroll
        for (int e = 0; e < PT * PK; ++e) acc[h][e] += p * v[e];
      }
    }
    __syncthreads();  // the next tile rewrites rows and scores
  }

  // The key groups' sums: the groups of a warp hold the same elements in lanes tpk apart.
  for (int o = tpk; o < 32; o <<= 1) {
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      if (h >= heads) break;
#pragma unroll
      for (int e = 0; e < PT * PK; ++e) acc[h][e] += __shfl_xor_sync(kFullMask, acc[h][e], o);
    }
  }
  if (lane < tpk) {
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
      if (h >= heads) break;
#pragma unroll
      for (int r = 0; r < PT; ++r) {
        const int c = sub + r * tpk;
        if (c < packs) {
#pragma unroll
          for (int e = 0; e < PK; ++e) warp_out[(warp * kHeads + h) * Dp + c * PK + e] = acc[h][r * PK + e];
        }
      }
    }
  }
  __syncthreads();
  if (plan.num_partitions == 1) {
    // The one partition holds the whole context: the output directly, without the reduce.
    T* out = static_cast<T*>(a.out) + (s.offset * a.num_heads + first_head) * D;
    for (int e = threadIdx.x; e < heads * D; e += kThreads) {
      const int h = e / D, d = e % D;
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) sum += warp_out[(w * kHeads + h) * Dp + d];
      out[e] = from_float<T>(sum / run_sum[h]);
    }
    return;
  }
  // Workspace: max and sum [seqs, heads, partitions], then the sums [seqs, heads, partitions, D].
  const int64_t slots = static_cast<int64_t>(a.num_seqs) * a.num_heads * plan.num_partitions;
  const int64_t slot0 = (seq * a.num_heads + first_head) * plan.num_partitions + partition;
  for (int e = threadIdx.x; e < heads * D; e += kThreads) {
    const int h = e / D, d = e % D;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += warp_out[(w * kHeads + h) * Dp + d];
    ws[2 * slots + (slot0 + h * plan.num_partitions) * D + d] = sum;
  }
  if (threadIdx.x < heads) {
    ws[slot0 + threadIdx.x * plan.num_partitions] = run_max[threadIdx.x];
    ws[slots + slot0 + threadIdx.x * plan.num_partitions] = run_sum[threadIdx.x];
  }
}

// One block per (query head, sequence): the partitions the row saw, combined by their maxima
// (log-sum-exp), divided by the total sum and written in the activation dtype.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    paged_decode_reduce_kernel(PagedAttentionCudaArgs a, PagedDecodePlan plan, const float* ws) {
  const int64_t head = blockIdx.x, seq = blockIdx.y;
  const DeviceSeq s = a.seqs[seq];
  if (s.length < 1) return;
  const int64_t P = plan.partition_size, position = s.start_pos;
  const int64_t first = first_key(position, a.sliding_window) / P, last = position / P;
  const int64_t slots = static_cast<int64_t>(a.num_seqs) * a.num_heads * plan.num_partitions;
  const int64_t slot0 = (seq * a.num_heads + head) * plan.num_partitions;
  const float* maxes = ws + slot0;
  const float* sums = ws + slots + slot0;
  const float* partial = ws + 2 * slots + slot0 * a.head_dim;
  float m = -INFINITY;
  for (int64_t p = first; p <= last; ++p) m = fmaxf(m, maxes[p]);
  float total = 0.0f;
  for (int64_t p = first; p <= last; ++p) total += expf(maxes[p] - m) * sums[p];
  const float inverse = 1.0f / total;
  T* out = static_cast<T*>(a.out) + (s.offset * a.num_heads + head) * a.head_dim;
  for (int64_t d = threadIdx.x; d < a.head_dim; d += kThreads) {
    float o = 0.0f;
    for (int64_t p = first; p <= last; ++p) o += expf(maxes[p] - m) * partial[p * a.head_dim + d];
    out[d] = from_float<T>(o * inverse);
  }
}

/// Threads per key row: the power of two at or above the row's 16-byte packs, at most a warp.
template <typename KV>
int threads_per_key(int64_t head_dim) {
  const int64_t packs = (head_dim + kPack<KV> - 1) / kPack<KV>;
  int tpk = 1;
  while (tpk < 32 && tpk * kPacksPerThread<KV> < packs) tpk *= 2;
  return tpk;
}

template <typename T, typename KV>
void launch(const PagedAttentionCudaArgs& a, const PagedDecodePlan& plan, float* ws, cudaStream_t stream) {
  const int64_t packs = (a.head_dim + kPack<KV> - 1) / kPack<KV>, Dp = packs * kPack<KV>;
  const size_t smem = static_cast<size_t>((1 + kWarps) * kHeads * Dp + kHeads * kTile + 3 * kHeads) * sizeof(float);
  // head_dim <= kPagedDecodeMaxHeadDim keeps it within the 48 KiB every GPU gives without opt-in.
  require(smem <= 48 * 1024, "paged_decode_attention_kernel", "shared memory over 48 KiB");
  const dim3 grid(static_cast<unsigned>(plan.num_partitions), static_cast<unsigned>(a.num_kv_heads * plan.head_chunks),
                  static_cast<unsigned>(a.num_seqs));
  paged_decode_attention_kernel<T, KV><<<grid, kThreads, smem, stream>>>(a, plan, ws, threads_per_key<KV>(a.head_dim));
  check_launch("paged_decode_attention_kernel");
  if (plan.num_partitions == 1) return;  // the kernel wrote the output
  const dim3 reduce_grid(static_cast<unsigned>(a.num_heads), static_cast<unsigned>(a.num_seqs));
  paged_decode_reduce_kernel<T><<<reduce_grid, kThreads, 0, stream>>>(a, plan, ws);
  check_launch("paged_decode_reduce_kernel");
}

template <typename T>
void launch_pools(const PagedAttentionCudaArgs& a, const PagedDecodePlan& plan, float* ws, cudaStream_t stream) {
  switch (a.kv_dtype) {
    case KvDtype::Float32:
      launch<T, float>(a, plan, ws, stream);
      break;
    case KvDtype::BFloat16:
      launch<T, __nv_bfloat16>(a, plan, ws, stream);
      break;
    case KvDtype::Float16:
      launch<T, __half>(a, plan, ws, stream);
      break;
  }
}

}  // namespace

bool paged_decode_attention_applies(const PagedAttentionCudaArgs& a) {
  return a.max_length == 1 && a.head_dim > 0 && a.head_dim <= kPagedDecodeMaxHeadDim && a.num_kv_heads > 0 &&
         a.num_seqs <= 65535 && a.num_heads <= 65535 &&
         a.num_kv_heads *
                 ((a.num_heads / a.num_kv_heads + kPagedDecodeHeadsPerBlock - 1) / kPagedDecodeHeadsPerBlock) <=
             65535;
}

int cuda_multiprocessor_count() {
  int device = 0, count = 0;
  check_cuda(cudaGetDevice(&device), "cuda_multiprocessor_count: cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
             "cuda_multiprocessor_count: cudaDeviceGetAttribute");
  return count;
}

PagedDecodePlan plan_paged_decode_attention(const PagedAttentionCudaArgs& a, int multiprocessors) {
  return plan_paged_decode(a.num_seqs, a.num_heads, a.num_kv_heads, a.head_dim, a.table_stride * a.block_size,
                           a.sliding_window, multiprocessors);
}

void paged_decode_attention_cuda(const PagedAttentionCudaArgs& a, const PagedDecodePlan& plan, float* workspace,
                                 cudaStream_t stream) {
  const char* name = "paged_decode_attention_kernel";
  require(a.num_kv_heads > 0 && a.num_heads % a.num_kv_heads == 0, name,
          "num_heads must be a multiple of num_kv_heads");
  require(a.block_size > 0, name, "block_size must be positive");
  require(paged_decode_attention_applies(a), name,
          "a decode-only step (max_length 1) with head_dim <= 256 and a batch the grid holds");
  require(a.activation_dtype != ElementDtype::Float16, name, "activation_dtype must be Float32 or BFloat16");
  require(plan.partition_size > 0 && plan.partition_size % kPagedDecodeTile == 0, name,
          "partition_size must be a positive multiple of kPagedDecodeTile");
  require(
      plan.num_partitions * plan.partition_size >= a.table_stride * a.block_size && plan.num_partitions <= 2147483647,
      name, "the partitions must cover table_stride * block_size keys");
  require(plan.head_chunks * kPagedDecodeHeadsPerBlock >= a.num_heads / a.num_kv_heads, name,
          "head_chunks must cover the query heads of a group");
  require(
      plan.workspace_floats >= static_cast<int64_t>(a.num_seqs) * a.num_heads * plan.num_partitions * (a.head_dim + 2),
      name, "workspace_floats too small for the plan");
  require(workspace != nullptr, name, "workspace is null");
  if (a.num_seqs == 0 || a.max_length <= 0) return;
  if (a.activation_dtype == ElementDtype::BFloat16) {
    launch_pools<__nv_bfloat16>(a, plan, workspace, stream);
  } else {
    launch_pools<float>(a, plan, workspace, stream);
  }
}

}  // namespace izwi
