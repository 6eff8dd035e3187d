// prefill_attention (scaled_dot_product_attention over K/V gathered from the paged pools) against
// the paged kernel on CPU tensors, and split_prefill, which hands the paged kernel the other
// sequences of a step (staged as the Cuda backend stages them, here on the CPU).

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "common/reference.h"
#include "kernels/backend.h"
#include "kernels/ops/paged_attention_op.h"
#include "kernels/ops/prefill_attention_op.h"
#include "layers/step/forward_context.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr int64_t kBlock = 16, kKvHeads = 2, kPoolBlocks = 48;

// A step of long chunks (from 0, after cached prefixes of 37 and 128) with decode rows and a short
// chunk between them, over block tables drawn from a shuffled pool.
struct Step {
  std::vector<std::vector<int32_t>> tables;
  std::vector<SeqSlice> seqs;

  Step() {
    const std::vector<std::pair<int64_t, int64_t>> shape = {{100, 0}, {1, 200}, {70, 37}, {1, 5}, {64, 128}, {10, 20}};
    std::vector<int32_t> pool(kPoolBlocks);
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), std::mt19937(7));
    tables.reserve(shape.size());
    int64_t row = 0;
    size_t next_block = 0;
    for (const auto& [length, start] : shape) {
      const size_t blocks = static_cast<size_t>((start + length + kBlock - 1) / kBlock);
      tables.emplace_back(pool.begin() + next_block, pool.begin() + next_block + blocks);
      next_block += blocks;
      SeqSlice s;
      s.offset = row, s.length = length, s.start_pos = start;
      seqs.push_back(s);
      row += length;
    }
    for (size_t i = 0; i < seqs.size(); ++i) seqs[i].block_table = &tables[i];
  }

  int64_t rows() const { return seqs.back().offset + seqs.back().length; }
  std::vector<SeqSlice> long_chunks() const {
    std::vector<SeqSlice> out;
    std::copy_if(seqs.begin(), seqs.end(), std::back_inserter(out), ops::takes_prefill_attention);
    return out;
  }
};

TEST(PrefillAttention, MatchesThePagedKernelWithPrefixesGroupsAndWindows) {
  at::manual_seed(3);
  const Step step;
  ASSERT_EQ(step.long_chunks().size(), 3u) << "100 from 0, 70 after 37, 64 after 128";
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    for (const int64_t group : {1, 2, 4}) {
      for (const int64_t window : {0, 48}) {
        const int64_t heads = kKvHeads * group, head_dim = 64;
        // Inputs rounded to `dtype`; the reference is the float32 CPU kernel on those values.
        const at::Tensor key_pool = at::randn({kPoolBlocks, kBlock, kKvHeads, head_dim}).to(dtype);
        const at::Tensor value_pool = at::randn_like(key_pool);
        const at::Tensor q = at::randn({step.rows(), heads, head_dim}).to(dtype);
        const double scale = 0.125;
        const at::Tensor expected =
            ops::paged_attention(Backend::host(), q.to(at::kFloat), key_pool.to(at::kFloat), value_pool.to(at::kFloat),
                                 step.seqs, DeviceStepArrays{}, kBlock, scale, window);

        const float untouched = 7.0f;
        at::Tensor out = at::full({step.rows(), heads, head_dim}, untouched, at::TensorOptions().dtype(dtype));
        ops::prefill_attention(q, key_pool, value_pool, step.long_chunks(), kBlock, scale, window, 0, out);

        // bf16: scores, probabilities and sums rounded to bf16 in the math kernel.
        const double tolerance = dtype == at::kFloat ? 2e-5 : 3e-2;
        for (const SeqSlice& s : step.seqs) {
          const at::Tensor got = out.narrow(0, s.offset, s.length).to(at::kFloat);
          if (ops::takes_prefill_attention(s)) {
            EXPECT_LT(max_abs_diff(got, expected.narrow(0, s.offset, s.length)), tolerance)
                << dtype << " group " << group << " window " << window << " start " << s.start_pos;
          } else {
            EXPECT_TRUE(at::all(got == untouched).item<bool>()) << "rows of sequence at " << s.offset << " written";
          }
        }
      }
    }
  }
}

TEST(PrefillAttention, WritesIntoOutputsOfAnotherDtype) {
  at::manual_seed(4);
  const Step step;
  const at::Tensor key_pool = at::randn({kPoolBlocks, kBlock, kKvHeads, 32}).to(at::kBFloat16);
  const at::Tensor value_pool = at::randn_like(key_pool);
  const at::Tensor q = at::randn({step.rows(), 4, 32});
  // The Cuda dispatch's output is float32 whatever the pools; q float32 takes the pools' values widened.
  at::Tensor out = at::zeros_like(q);
  ops::prefill_attention(q, key_pool, value_pool, step.long_chunks(), kBlock, 0.2, 0, 0, out);
  const at::Tensor expected =
      ops::paged_attention(Backend::host(), q, key_pool, value_pool, step.seqs, DeviceStepArrays{}, kBlock, 0.2, 0);
  const SeqSlice& first = step.seqs.front();
  EXPECT_LT(max_abs_diff(out.narrow(0, 0, first.length), expected.narrow(0, 0, first.length)), 2e-5);
}

StepSequence step_sequence(const SeqSlice& s, const std::vector<int32_t>& ids, int32_t slot) {
  StepSequence seq;
  seq.start_pos = static_cast<int32_t>(s.start_pos);
  seq.num_tokens = static_cast<int32_t>(s.length);
  seq.token_ids = ids.data();
  seq.block_table = s.block_table;
  seq.state_slot = slot;
  return seq;
}

TEST(PrefillAttention, SplitHandsThePagedKernelTheOtherSequencesStagedAlike) {
  const Step step;
  const std::vector<int32_t> ids(static_cast<size_t>(step.rows()), 1);
  StepBatch batch;
  for (size_t i = 0; i < step.seqs.size(); ++i) {
    batch.seqs.push_back(step_sequence(step.seqs[i], ids, static_cast<int32_t>(i)));
  }
  const ForwardContext ctx = stage_forward_inputs(batch, kBlock, at::kCPU, /*device_arrays=*/true);
  const DeviceStepArrays& all = ctx.device_seqs;
  const ops::PrefillSplit split = ops::split_prefill(ctx.seqs, all);

  ASSERT_EQ(split.prefill.size(), 3u);
  EXPECT_EQ(split.prefill[1].start_pos, 37);
  EXPECT_EQ(split.prefill[1].offset, step.seqs[2].offset);
  EXPECT_EQ(split.paged.size(), 3u);
  const DeviceStepArrays& paged = split.paged_device;
  ASSERT_TRUE(paged.staged());
  ASSERT_EQ(paged.num_seqs, 3);
  EXPECT_EQ(paged.max_length, 10) << "the short chunk, not the long ones";
  EXPECT_EQ(paged.table_stride, all.table_stride);
  const int kept[3] = {1, 3, 5};
  for (int i = 0; i < 3; ++i) {
    const DeviceSeq &got = paged.seqs[i], &want = all.seqs[kept[i]];
    EXPECT_EQ(split.paged[i].offset, want.offset) << i;
    EXPECT_EQ(got.offset, want.offset) << i;
    EXPECT_EQ(got.length, want.length) << i;
    EXPECT_EQ(got.start_pos, want.start_pos) << i;
    EXPECT_EQ(got.state_slot, kept[i]) << i;
    EXPECT_TRUE(std::equal(paged.block_tables + i * paged.table_stride,
                           paged.block_tables + (i + 1) * paged.table_stride,
                           all.block_tables + kept[i] * all.table_stride))
        << "block table of sequence " << kept[i];
  }

  // A step without long chunks keeps the staged arrays; one of long chunks only leaves none.
  StepBatch decode;
  decode.seqs = {batch.seqs[1], batch.seqs[3]};
  const ForwardContext decode_ctx = stage_forward_inputs(decode, kBlock, at::kCPU, true);
  const ops::PrefillSplit decode_split = ops::split_prefill(decode_ctx.seqs, decode_ctx.device_seqs);
  EXPECT_TRUE(decode_split.prefill.empty());
  EXPECT_EQ(decode_split.paged.size(), 2u);
  EXPECT_EQ(decode_split.paged_device.seqs, decode_ctx.device_seqs.seqs);
  EXPECT_EQ(decode_split.paged_device.num_seqs, 2);
  StepBatch prompts;
  prompts.seqs = {batch.seqs[0], batch.seqs[4]};
  const ForwardContext prompts_ctx = stage_forward_inputs(prompts, kBlock, at::kCPU, true);
  const ops::PrefillSplit prompts_split = ops::split_prefill(prompts_ctx.seqs, prompts_ctx.device_seqs);
  EXPECT_EQ(prompts_split.prefill.size(), 2u);
  EXPECT_EQ(prompts_split.paged_device.num_seqs, 0);
  EXPECT_EQ(prompts_split.paged_device.max_length, 0);
}

}  // namespace
}  // namespace izwi
