// plan_paged_decode: how split-K decode attention divides a step among thread blocks (the kernel
// itself runs on a GPU only, tests/cuda/test_paged_attention_cuda.cpp). The partitions cover the
// bound on the context, fill two blocks per multiprocessor where the keys allow, and stay at most
// kPagedDecodeMaxPartition keys; the workspace holds a max, a sum and head_dim sums per slot.

#include <gtest/gtest.h>

#include "kernels/paged_decode_plan.h"

namespace izwi {
namespace {

constexpr int kH200Multiprocessors = 132;

int64_t blocks(const PagedDecodePlan& plan, int64_t num_seqs, int64_t kv_heads, int64_t span) {
  return num_seqs * kv_heads * plan.head_chunks * ((span + plan.partition_size - 1) / plan.partition_size);
}

TEST(PagedDecodePlan, BatchOneShortContextTakesTheSmallestPartitions) {
  // llama-3.2-1b at batch 1, ~190 positions in a graph bucket of 16 blocks of 16: 8 blocks without
  // a split (the kernel before split-K); 32 with partitions of the tile.
  const PagedDecodePlan plan = plan_paged_decode(1, 32, 8, 64, 256, 0, kH200Multiprocessors);
  EXPECT_EQ(plan.partition_size, kPagedDecodeTile);
  EXPECT_EQ(plan.num_partitions, 4);
  EXPECT_EQ(plan.head_chunks, 1);
  EXPECT_EQ(plan.workspace_floats, 1 * 32 * 4 * (64 + 2));
}

TEST(PagedDecodePlan, PartitionsFillTwoBlocksPerMultiprocessor) {
  for (const int64_t num_seqs : {1, 2, 7, 64}) {
    for (const int64_t context : {1, 17, 255, 256, 257, 1000, 4100, 32768}) {
      const PagedDecodePlan plan = plan_paged_decode(num_seqs, 32, 8, 128, context, 0, kH200Multiprocessors);
      SCOPED_TRACE(testing::Message() << num_seqs << " seqs, context " << context);
      EXPECT_EQ(plan.partition_size % kPagedDecodeTile, 0);
      EXPECT_LE(plan.partition_size, kPagedDecodeMaxPartition);
      EXPECT_GE(plan.num_partitions * plan.partition_size, context);
      EXPECT_LT((plan.num_partitions - 1) * plan.partition_size, context);
      // The largest partition that fills the GPU: twice as large would not, unless at the cap.
      if (plan.partition_size > kPagedDecodeTile) {
        EXPECT_GE(blocks(plan, num_seqs, 8, context), 2 * kH200Multiprocessors);
      }
      if (plan.partition_size < kPagedDecodeMaxPartition) {
        PagedDecodePlan larger = plan;
        larger.partition_size *= 2;
        EXPECT_LT(blocks(larger, num_seqs, 8, context), 2 * kH200Multiprocessors);
      }
    }
  }
  // A long context at batch 1 fills the GPU with the largest partitions.
  EXPECT_EQ(plan_paged_decode(1, 32, 8, 128, 65536, 0, kH200Multiprocessors).partition_size, kPagedDecodeMaxPartition);
}

TEST(PagedDecodePlan, SlidingWindowSizesPartitionsByTheKeysARowSees) {
  // 4096 keys of bound, a window of 256: the rows see at most 256 keys (4 or 5 partitions of 64),
  // so the partitions are as small as a 256-key context's, and still cover the whole bound.
  const PagedDecodePlan windowed = plan_paged_decode(2, 16, 8, 64, 4096, 256, kH200Multiprocessors);
  const PagedDecodePlan short_context = plan_paged_decode(2, 16, 8, 64, 256, 0, kH200Multiprocessors);
  EXPECT_EQ(windowed.partition_size, short_context.partition_size);
  EXPECT_EQ(windowed.num_partitions, 4096 / windowed.partition_size);
  EXPECT_GT(plan_paged_decode(2, 16, 8, 64, 4096, 0, kH200Multiprocessors).partition_size, windowed.partition_size);
}

TEST(PagedDecodePlan, LargeGroupsSplitAcrossBlocks) {
  EXPECT_EQ(plan_paged_decode(1, 8, 8, 64, 100, 0, 1).head_chunks, 1);   // group 1
  EXPECT_EQ(plan_paged_decode(1, 64, 8, 64, 100, 0, 1).head_chunks, 1);  // group 8
  EXPECT_EQ(plan_paged_decode(1, 72, 8, 64, 100, 0, 1).head_chunks, 2);  // group 9
  EXPECT_EQ(plan_paged_decode(1, 32, 1, 64, 100, 0, 1).head_chunks, 4);  // group 32
  // More blocks per partition, so larger partitions fill the same GPU (16 multiprocessors).
  EXPECT_EQ(plan_paged_decode(1, 32, 1, 64, 8192, 0, 16).partition_size, 512);
  EXPECT_EQ(plan_paged_decode(1, 8, 1, 64, 8192, 0, 16).partition_size, 256);
}

TEST(PagedDecodePlan, WorkspaceIsMaxSumAndSumsPerSlot) {
  const PagedDecodePlan plan = plan_paged_decode(64, 16, 4, 128, 4100, 0, kH200Multiprocessors);
  EXPECT_EQ(plan.workspace_floats, 64 * 16 * plan.num_partitions * (128 + 2));
  // A zero-length bound still has one partition slot, so the workspace is never empty.
  EXPECT_EQ(plan_paged_decode(1, 8, 8, 64, 0, 0, kH200Multiprocessors).num_partitions, 1);
}

}  // namespace
}  // namespace izwi
