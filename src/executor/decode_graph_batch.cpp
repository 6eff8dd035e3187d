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

ForwardContext leading_sequences(const ForwardContext& padded, size_t count) {
  IZWI_CHECK(count <= padded.seqs.size() && padded.states.size() == padded.seqs.size(),
             "{} leading sequences of a context of {} ({} states)", count, padded.seqs.size(), padded.states.size());
  ForwardContext ctx = padded;
  ctx.seqs.resize(count);
  ctx.states.resize(count);
  ctx.num_tokens = count == 0 ? 0 : ctx.seqs.back().offset + ctx.seqs.back().length;
  ctx.input_ids = padded.input_ids.narrow(0, 0, ctx.num_tokens);
  ctx.positions = padded.positions.narrow(0, 0, ctx.num_tokens);
  ctx.slot_mapping = padded.slot_mapping.narrow(0, 0, ctx.num_tokens);
  ctx.device_seqs = DeviceStepArrays{};
  return ctx;
}

ForwardContext write_input_embeddings(const CausalLM& model, const ForwardContext& padded, size_t count,
                                      at::Tensor& inputs) {
  ForwardContext own = leading_sequences(padded, count);
  const at::Tensor h = model.input_embeddings(own);
  IZWI_CHECK(h.dim() == 2 && inputs.dim() == 2, "input embeddings of {} dimensions for a buffer of {}", h.dim(),
             inputs.dim());
  IZWI_CHECK(h.size(0) == own.num_tokens && own.num_tokens <= inputs.size(0) && h.size(1) == inputs.size(1),
             "input embeddings [{}, {}] for {} rows of a [{}, {}] buffer", h.size(0), h.size(1), own.num_tokens,
             inputs.size(0), inputs.size(1));
  inputs.narrow(0, 0, own.num_tokens).copy_(h, /*non_blocking=*/true);
  return own;
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
