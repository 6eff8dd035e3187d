#pragma once
// The batches a captured decode step (executor/cuda_decode_graphs.h) replays: decode-only steps of
// up to a bucket's size (1, 2, 4, ...), padded to it with one-position sequences that write only
// to a KV block and a state slot the engine never hands out. Plain StepBatch logic, and the host
// side of a step of a graph from embeddings, so the CPU build tests them.

#include <cstdint>
#include <vector>

#include "layers/step/forward_context.h"
#include "layers/step/step_batch.h"
#include "models/causal_lm.h"

namespace izwi {

/// The pool's extra block and state slot that padding sequences use (CacheBuffers is allocated
/// with one more of each than the engine manages).
struct DecodeGraphPadding {
  int32_t block = -1;
  int32_t state_slot = -1;  ///< -1 when the model has no recurrent state.
};

/// The smallest power of two >= batch_size, or 0 when that exceeds max_bucket.
int32_t decode_graph_bucket(int32_t batch_size, int32_t max_bucket);

/// The block-table width of the graph that runs `batch`: the power of two >= the blocks its longest
/// context spans, at most max_stride (the model's longest context). Graphs are captured per
/// (bucket, width), so a step stages tables about as wide as its contexts, not the longest possible.
int64_t decode_graph_table_stride(const StepBatch& batch, int64_t block_size, int64_t max_stride);

/// A step a graph can replay: one new position per sequence, no state to initialise, no more
/// sequences than the largest bucket.
bool replayable_decode_step(const StepBatch& batch, int32_t max_bucket);

/// The first `count` sequences of a padded step's context: their host slices and states, the
/// leading rows of its ids, positions and slots (views), and no device arrays (those describe the
/// padded batch). What the per-row host work of an embeddings graph's step reads
/// (CausalLM::input_embeddings), so padding sequences feed no request's state.
ForwardContext leading_sequences(const ForwardContext& padded, size_t count);

/// An embeddings graph's host side of a step: the input embeddings of the first `count` sequences
/// of `padded` (model.input_embeddings over leading_sequences) copied into rows 0..n-1 of `inputs`
/// [bucket, hidden] on its device (no wait; the other rows are left as they are). Returns the
/// leading context.
ForwardContext write_input_embeddings(const CausalLM& model, const ForwardContext& padded, size_t count,
                                      at::Tensor& inputs);

/// Pads batches to a bucket's size. Padding sequence: token 0 at position 0 of the padding block,
/// the padding state slot, nothing sampled.
class DecodeBatchPadder {
 public:
  explicit DecodeBatchPadder(const DecodeGraphPadding& padding);

  /// `batch`'s sequences, then padding ones up to `bucket` (valid until the next call).
  const StepBatch& pad(const StepBatch& batch, int32_t bucket);

 private:
  DecodeGraphPadding padding_;
  std::vector<int32_t> table_;
  int32_t token_ = 0;
  StepBatch padded_;
};

}  // namespace izwi
