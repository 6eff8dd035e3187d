#pragma once
// How split-K decode attention (kernels/cuda/paged_decode_attention_cuda.h) divides a step: each
// (sequence, KV head) context in partitions of keys, one thread block each, so a batch of a few
// sequences still fills the GPU. Plain C++ without CUDA headers: the CPU suite tests the choice,
// and the sizes come from the step's arguments only (the same at a CUDA graph's capture and replay).

#include <algorithm>
#include <cstdint>

namespace izwi {

/// Keys a block scores at once (its online softmax steps by tiles); partitions are multiples.
constexpr int64_t kPagedDecodeTile = 64;
/// The largest partition: with a grid already full, longer partitions only lengthen the blocks.
constexpr int64_t kPagedDecodeMaxPartition = 512;
/// Query heads of a KV group one block holds (a larger group is split across blocks).
constexpr int64_t kPagedDecodeHeadsPerBlock = 8;
/// The largest head_dim the split-K kernel takes (its per-thread registers are sized for it).
constexpr int64_t kPagedDecodeMaxHeadDim = 256;

struct PagedDecodePlan {
  int64_t partition_size = 0;    ///< Keys per partition, a multiple of kPagedDecodeTile.
  int64_t num_partitions = 0;    ///< Partition slots per (sequence, query head): cover max_context.
  int64_t head_chunks = 0;       ///< Blocks per (partition, KV head): the group in chunks of 8 heads.
  int64_t workspace_floats = 0;  ///< Per (sequence, query head, partition): max, sum, head_dim sums.
};

/// max_context: an upper bound on any sequence's context (table_stride * block_size). The smallest
/// power-of-two partition from kPagedDecodeMaxPartition down to kPagedDecodeTile that gives two
/// blocks per multiprocessor over the keys a row sees (the sliding window, if shorter), or the
/// tile when none does. Partitions wholly outside a sequence's context or window are skipped by
/// the kernel and the reduce, so sizing by the bound only costs empty blocks.
inline PagedDecodePlan plan_paged_decode(int64_t num_seqs, int64_t num_heads, int64_t num_kv_heads, int64_t head_dim,
                                         int64_t max_context, int64_t sliding_window, int multiprocessors) {
  PagedDecodePlan plan;
  const int64_t group = num_heads / num_kv_heads;
  plan.head_chunks = (group + kPagedDecodeHeadsPerBlock - 1) / kPagedDecodeHeadsPerBlock;
  const int64_t span = sliding_window > 0 ? std::min(max_context, sliding_window) : max_context;
  const int64_t wanted = 2 * static_cast<int64_t>(std::max(multiprocessors, 1));
  const int64_t blocks_per_partition = num_seqs * num_kv_heads * plan.head_chunks;
  plan.partition_size = kPagedDecodeMaxPartition;
  while (plan.partition_size > kPagedDecodeTile &&
         blocks_per_partition * ((span + plan.partition_size - 1) / plan.partition_size) < wanted) {
    plan.partition_size /= 2;
  }
  plan.num_partitions = std::max<int64_t>(1, (max_context + plan.partition_size - 1) / plan.partition_size);
  plan.workspace_floats = num_seqs * num_heads * plan.num_partitions * (head_dim + 2);
  return plan;
}

}  // namespace izwi
