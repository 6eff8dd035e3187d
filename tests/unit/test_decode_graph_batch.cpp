// The batches a CUDA graph replays (executor/decode_graph_batch.h): which steps qualify, their
// bucket, and the padding that fills a bucket. The staged layout of every batch of a bucket must
// be the same size, since the graph reads one fixed buffer.

#include <gtest/gtest.h>

#include <vector>

#include "executor/decode_graph_batch.h"
#include "layers/step/forward_context.h"

namespace izwi {
namespace {

struct Sequences {
  std::vector<int32_t> token = {42};
  std::vector<std::vector<int32_t>> tables;
  StepBatch batch;

  // n decode sequences, sequence i at position 3 * i + 1, its blocks i + 10, i + 40, i + 70.
  explicit Sequences(int n) : tables(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      tables[static_cast<size_t>(i)] = {i + 10, i + 40, i + 70};
      StepSequence s;
      s.start_pos = 3 * i + 1;
      s.num_tokens = 1;
      s.token_ids = token.data();
      s.block_table = &tables[static_cast<size_t>(i)];
      s.state_slot = i;
      batch.seqs.push_back(s);
    }
  }
};

TEST(DecodeGraphBatch, BucketsArePowersOfTwoUpToTheLargest) {
  EXPECT_EQ(decode_graph_bucket(1, 256), 1);
  EXPECT_EQ(decode_graph_bucket(3, 256), 4);
  EXPECT_EQ(decode_graph_bucket(17, 256), 32);
  EXPECT_EQ(decode_graph_bucket(256, 256), 256);
  EXPECT_EQ(decode_graph_bucket(257, 256), 0);
  EXPECT_EQ(decode_graph_bucket(5, 6), 0) << "8 exceeds a largest bucket of 6";
  EXPECT_EQ(decode_graph_bucket(0, 256), 0);
}

TEST(DecodeGraphBatch, TableWidthsArePowersOfTwoOfTheLongestContext) {
  // Sequence i decodes position 3 * i + 1: 5 sequences reach position 13, 6 reach 16.
  EXPECT_EQ(decode_graph_table_stride(Sequences(5).batch, 4, 64), 4) << "14 positions, 4 blocks of 4";
  EXPECT_EQ(decode_graph_table_stride(Sequences(6).batch, 4, 64), 8) << "17 positions, 5 blocks";
  EXPECT_EQ(decode_graph_table_stride(Sequences(6).batch, 4, 6), 6) << "capped at the longest context";
  EXPECT_EQ(decode_graph_table_stride(StepBatch{}, 4, 64), 1);
}

TEST(DecodeGraphBatch, OnlyDecodeStepsWithStateInPlaceReplay) {
  Sequences decode(5);
  EXPECT_TRUE(replayable_decode_step(decode.batch, 8));
  EXPECT_FALSE(replayable_decode_step(decode.batch, 4)) << "needs a bucket of 8";
  Sequences chunk(2);
  chunk.batch.seqs[1].num_tokens = 2;
  EXPECT_FALSE(replayable_decode_step(chunk.batch, 8)) << "a prefill chunk";
  Sequences fresh(2);
  fresh.batch.seqs[0].fresh_state = true;
  EXPECT_FALSE(replayable_decode_step(fresh.batch, 8)) << "a state to initialise first";
  EXPECT_FALSE(replayable_decode_step(StepBatch{}, 8));
}

TEST(DecodeGraphBatch, PaddingSequencesWriteOnlyThePaddingBlockAndSlot) {
  Sequences three(3);
  three.batch.block_copies.push_back(BlockCopy{1, 2});
  DecodeBatchPadder padder(DecodeGraphPadding{99, 7});
  const StepBatch& padded = padder.pad(three.batch, 8);
  ASSERT_EQ(padded.seqs.size(), 8u);
  EXPECT_TRUE(padded.block_copies.empty()) << "the executor applies copies before the forward pass";
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(padded.seqs[i].start_pos, three.batch.seqs[i].start_pos);
  for (size_t i = 3; i < 8; ++i) {
    const StepSequence& s = padded.seqs[i];
    EXPECT_EQ(s.start_pos, 0);
    EXPECT_EQ(s.num_tokens, 1);
    EXPECT_EQ(*s.block_table, std::vector<int32_t>{99});
    EXPECT_EQ(s.state_slot, 7);
    EXPECT_EQ(s.sampling, nullptr);
    EXPECT_FALSE(s.fresh_state);
  }
  const ForwardContext ctx = stage_forward_inputs(padded, 16, at::kCPU, /*device_arrays=*/true, 32);
  const int64_t* slots = ctx.slot_mapping.data_ptr<int64_t>();
  EXPECT_EQ(slots[2], 12 * 16 + 7);
  for (int i = 3; i < 8; ++i) EXPECT_EQ(slots[i], 99 * 16) << i;
}

TEST(DecodeGraphBatch, EveryBatchOfABucketStagesTheSameLayout) {
  // The graph captured over padding alone reads the buffer every later batch of its shape is
  // copied into.
  DecodeBatchPadder padder(DecodeGraphPadding{99, -1});
  const int64_t width = decode_graph_table_stride(Sequences(16).batch, 16, 64);
  const int64_t words = stage_forward_inputs(padder.pad(StepBatch{}, 16), 16, at::kCPU, /*device_arrays=*/true, width)
                            .device_seqs.words.numel();
  for (const int n : {12, 14, 16}) {
    const Sequences batch(n);
    ASSERT_EQ(decode_graph_table_stride(batch.batch, 16, 64), width) << n << " sequences";
    const ForwardContext ctx =
        stage_forward_inputs(padder.pad(batch.batch, 16), 16, at::kCPU, /*device_arrays=*/true, width);
    EXPECT_EQ(ctx.device_seqs.words.numel(), words) << n << " sequences";
    EXPECT_EQ(ctx.device_seqs.table_stride, width);
    EXPECT_EQ(ctx.num_tokens, 16);
  }
}

TEST(DecodeGraphBatch, LeadingSequencesAreTheBatchsOwnContext) {
  // A graph from embeddings builds its inputs from the batch's sequences alone: the padded
  // context cut to them must be what the unpadded batch stages, with no padding row or state.
  Sequences three(3);
  RequestState a, b, c;
  RequestState* states[] = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) three.batch.seqs[i].state = states[i];
  DecodeBatchPadder padder(DecodeGraphPadding{99, 7});
  const ForwardContext padded =
      stage_forward_inputs(padder.pad(three.batch, 8), 16, at::kCPU, /*device_arrays=*/true, 32);
  const ForwardContext own = leading_sequences(padded, 3);
  const ForwardContext expected = stage_forward_inputs(three.batch, 16, at::kCPU, /*device_arrays=*/false);
  EXPECT_EQ(own.num_tokens, 3);
  EXPECT_TRUE(own.input_ids.equal(expected.input_ids));
  EXPECT_TRUE(own.positions.equal(expected.positions));
  EXPECT_TRUE(own.slot_mapping.equal(expected.slot_mapping));
  ASSERT_EQ(own.seqs.size(), 3u);
  ASSERT_EQ(own.states, (std::vector<RequestState*>{&a, &b, &c}));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(own.seqs[i].offset, expected.seqs[i].offset);
    EXPECT_EQ(own.seqs[i].start_pos, expected.seqs[i].start_pos);
    EXPECT_EQ(own.seqs[i].block_table, expected.seqs[i].block_table);
  }
  EXPECT_FALSE(own.device_seqs.staged()) << "the device arrays describe the padded batch";
  EXPECT_TRUE(padded.device_seqs.staged());
  EXPECT_EQ(padded.num_tokens, 8) << "the padded context is left as it was";
  EXPECT_EQ(leading_sequences(padded, 0).num_tokens, 0);
  EXPECT_THROW(leading_sequences(padded, 9), Error);
}

}  // namespace
}  // namespace izwi
