#pragma once
// Decode steps as CUDA graphs (CUDA builds only): one graph per batch-size bucket and block-table
// width, captured the first time a step of that shape comes, over a batch of padding sequences,
// then replayed for every decode step that fits it. A step's inputs are staged as always
// (make_forward_context) and copied into the graph's fixed input buffer, whose layout is the same
// for every batch of the shape (its rows, sequences and block-table width are fixed), so one graph
// launch replaces the step's hundreds of kernel launches. Two kinds of model, one capture:
// - graph_safe_decode (text models): the graph runs the whole pass and the output head too
//   (logits() and the cast to float32), so a step only samples after the replay, with no host wait;
// - graph_safe_decode_from_embeddings (the speech backbones): the step builds its input
//   embeddings eagerly from the batch's own sequences (CausalLM::input_embeddings), copies them
//   into rows 0..n-1 of the graph's fixed [bucket, hidden] input buffer (device to device) and
//   replays forward_embeddings, whose final hidden states the model's own eager head samples.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "executor/decode_graph_batch.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"
#include "models/causal_lm.h"

namespace izwi {

struct DecodeGraphSettings {
  std::shared_ptr<const Backend> backend;  ///< The executor's: a CUDA device with the CUDA kernels.
  int64_t block_size = 0;
  int64_t max_table_stride = 0;  ///< The widest block tables a graph reads: the model's longest context.
  int32_t max_bucket = 0;
  DecodeGraphPadding padding;
  /// What the graphs capture: the pass from input embeddings (graph_safe_decode_from_embeddings),
  /// or the whole pass and the logits (graph_safe_decode).
  bool from_embeddings = false;
};

/// The executor's view of the graphs: an interface, so that a CPU build holds none and needs no
/// CUDA symbol.
class DecodeGraphs {
 public:
  virtual ~DecodeGraphs() = default;

  virtual bool replays(const StepBatch& batch) const = 0;

  /// Runs a replayable `batch` through its bucket's graph, capturing the graph first if it is new.
  /// Returns the padded batch's context and its logits, float32 [bucket, vocab]; or, from
  /// embeddings, the context of `batch`'s sequences alone (leading_sequences) and the final hidden
  /// states [bucket, hidden] in the backend's dtype. The first rows are `batch`'s sequences (one
  /// row each), the rest padding; they stay valid until the next call.
  virtual std::pair<ForwardContext, at::Tensor> run(const StepBatch& batch, const CausalLM& model,
                                                    CacheBuffers& cache) = 0;
};

/// Defined in CUDA builds only (cuda_decode_graphs.cpp).
std::unique_ptr<DecodeGraphs> make_cuda_decode_graphs(const DecodeGraphSettings& settings);

}  // namespace izwi
