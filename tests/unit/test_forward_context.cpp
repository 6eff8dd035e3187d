// make_forward_context: the one staged buffer a step's inputs go to the device in, and the packed
// sequence array and block tables the CUDA kernels read (packed by the CPU build too, so its layout
// is checked here).

#include <gtest/gtest.h>

#include <vector>

#include "izwi/errors.h"
#include "layers/step/forward_context.h"

namespace izwi {
namespace {

constexpr int64_t kBlockSize = 4;

// A prefill chunk of 5 positions from 0, a decode step at position 9, and a chunk of 3 from 4.
struct Batch {
  std::vector<int32_t> ids_a = {10, 11, 12, 13, 14}, ids_b = {20}, ids_c = {30, 31, 32};
  std::vector<int32_t> table_a = {7, 2}, table_b = {5, 0, 9}, table_c = {1, 3, 6};
  StepBatch batch;

  Batch() {
    batch.seqs.push_back(sequence(0, ids_a, table_a, 2));
    batch.seqs.push_back(sequence(9, ids_b, table_b, -1));
    batch.seqs.push_back(sequence(4, ids_c, table_c, 0));
  }

  static StepSequence sequence(int32_t start, const std::vector<int32_t>& ids, const std::vector<int32_t>& table,
                               int32_t slot) {
    StepSequence s;
    s.start_pos = start;
    s.num_tokens = static_cast<int32_t>(ids.size());
    s.token_ids = ids.data();
    s.block_table = &table;
    s.state_slot = slot;
    return s;
  }
};

std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

TEST(ForwardContext, FlattensIdsPositionsAndSlotsFromTheBlockTables) {
  const Batch b;
  const ForwardContext ctx = make_forward_context(b.batch, kBlockSize, Backend::host());
  EXPECT_EQ(ctx.num_tokens, 9);
  EXPECT_EQ(values(ctx.input_ids), (std::vector<int64_t>{10, 11, 12, 13, 14, 20, 30, 31, 32}));
  EXPECT_EQ(values(ctx.positions), (std::vector<int64_t>{0, 1, 2, 3, 4, 9, 4, 5, 6}));
  // Position p of a sequence goes to block table[p / 4], offset p % 4.
  EXPECT_EQ(values(ctx.slot_mapping), (std::vector<int64_t>{28, 29, 30, 31, 8, 37, 12, 13, 14}));
  ASSERT_EQ(ctx.seqs.size(), 3u);
  EXPECT_EQ(ctx.seqs[1].offset, 5);
  EXPECT_EQ(ctx.seqs[2].offset, 6);
  EXPECT_EQ(ctx.seqs[2].start_pos, 4);
  EXPECT_FALSE(ctx.device_seqs.staged()) << "only the Cuda backend packs device arrays";
  EXPECT_EQ(ctx.backend, &Backend::host()) << "the ops of the step ask the backend it was made for";
  EXPECT_EQ(ctx.dtype, at::kFloat);
}

TEST(ForwardContext, TheCudaBackendPacksSequencesAndBlockTablesForTheKernels) {
  const Batch b;
  const ForwardContext cpu = make_forward_context(b.batch, kBlockSize, Backend::host());
  const ForwardContext ctx = stage_forward_inputs(b.batch, kBlockSize, at::kCPU, /*device_arrays=*/true);
  EXPECT_EQ(values(ctx.input_ids), values(cpu.input_ids));
  EXPECT_EQ(values(ctx.positions), values(cpu.positions));
  EXPECT_EQ(values(ctx.slot_mapping), values(cpu.slot_mapping));

  const DeviceStepArrays& d = ctx.device_seqs;
  ASSERT_TRUE(d.staged());
  ASSERT_EQ(d.num_seqs, 3);
  EXPECT_EQ(d.max_length, 5);
  EXPECT_EQ(d.table_stride, 3) << "the longest context, 10 positions, spans 3 blocks";
  const int64_t expected[3][4] = {{0, 5, 0, 2}, {5, 1, 9, -1}, {6, 3, 4, 0}};
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(d.seqs[s].offset, expected[s][0]) << s;
    EXPECT_EQ(d.seqs[s].length, expected[s][1]) << s;
    EXPECT_EQ(d.seqs[s].start_pos, expected[s][2]) << s;
    EXPECT_EQ(d.seqs[s].state_slot, expected[s][3]) << s;
  }
  // Only the blocks a sequence's context reaches are copied; the rest of its row is -1.
  const std::vector<int32_t> tables(d.block_tables, d.block_tables + 9);
  EXPECT_EQ(tables, (std::vector<int32_t>{7, 2, -1, 5, 0, 9, 1, 3, -1}));
  // Everything lives in the one staged buffer the tensors view.
  const auto* begin = reinterpret_cast<const char*>(d.words.data_ptr<int64_t>());
  const auto* end = begin + d.words.numel() * 8;
  EXPECT_EQ(ctx.input_ids.data_ptr<int64_t>(), d.words.data_ptr<int64_t>());
  EXPECT_GE(reinterpret_cast<const char*>(d.seqs), begin);
  EXPECT_LE(reinterpret_cast<const char*>(d.block_tables + 9), end);
}

TEST(ForwardContext, APositionWithoutABlockIsAnError) {
  Batch b;
  b.table_b.resize(2);  // position 9 needs a third block
  EXPECT_THROW(make_forward_context(b.batch, kBlockSize, Backend::host()), Error);
}

}  // namespace
}  // namespace izwi
