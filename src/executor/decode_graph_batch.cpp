#include "executor/decode_graph_batch.h"

#include <algorithm>

#include "common/check.h"

namespace izwi {

int32_t decode_graph_bucket(int32_t batch_size, int32_t max_bucket) {
  if (batch_size < 1) return 0;
  int64_t bucket = 1;
  while (bucket < batch_size) bucket *= 2;
  return bucket <= max_bucket ? static_cast<int32_t>(bucket) : 0;
}

int64_t decode_graph_table_stride(const StepBatch& batch, int64_t block_size, int64_t max_stride) {
  int64_t blocks = 1;
  for (const StepSequence& s : batch.seqs) {
    blocks = std::max<int64_t>(blocks, (s.start_pos + s.num_tokens + block_size - 1) / block_size);
  }
  int64_t stride = 1;
  while (stride < blocks) stride *= 2;
  return std::max(blocks, std::min(stride, max_stride));
}

bool replayable_decode_step(const StepBatch& batch, int32_t max_bucket) {
  if (decode_graph_bucket(static_cast<int32_t>(batch.seqs.size()), max_bucket) == 0) return false;
  for (const StepSequence& s : batch.seqs) {
    if (s.num_tokens != 1 || s.fresh_state) return false;
  }
  return true;
}

DecodeBatchPadder::DecodeBatchPadder(const DecodeGraphPadding& padding) : padding_(padding), table_{padding.block} {
  IZWI_CHECK(padding.block >= 0, "decode graphs need a padding block");
}

const StepBatch& DecodeBatchPadder::pad(const StepBatch& batch, int32_t bucket) {
  IZWI_CHECK(static_cast<int32_t>(batch.seqs.size()) <= bucket, "{} sequences do not fit a bucket of {}",
             batch.seqs.size(), bucket);
  padded_.seqs = batch.seqs;
  padded_.block_copies.clear();  // applied before the forward pass, not by it
  StepSequence padding;
  padding.start_pos = 0;
  padding.num_tokens = 1;
  padding.token_ids = &token_;
  padding.block_table = &table_;
  padding.state_slot = padding_.state_slot;
  padded_.seqs.resize(static_cast<size_t>(bucket), padding);
  return padded_;
}

}  // namespace izwi
