#pragma once
// The batches a captured decode step (executor/cuda_decode_graphs.h) replays: decode-only steps of
// up to a bucket's size (1, 2, 4, ...), padded to it with one-position sequences that write only
// to a KV block and a state slot the engine never hands out. Plain StepBatch logic, so the CPU
// build tests it.

#include <cstdint>
#include <vector>

#include "layers/step/step_batch.h"

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
