#pragma once
// The Qwen3-TTS code predictor ("sub-talker"): a small Qwen3 decoder that completes each frame.
// Per frame it prefills [talker hidden, embedding of codebook 0] and then decodes one position
// per codebook, head j giving codebook j + 1. All frames of a step run as one batch, each row in
// its own block of the executor's dense scratch K/V (fresh every frame), through the same
// attention kernels as the paged cache.

#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/frame_chain_graphs.h"
#include "io/weight_source.h"
#include "layers/decoder_layer.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"
#include "layers/step/sampling_state.h"
#include "models/llama.h"
#include "sampling/sampler.h"

namespace izwi {

class Qwen3TtsCodePredictor {
 public:
  /// `prefix` = "talker.code_predictor"; embeddings are `talker_hidden` wide and projected by
  /// small_to_mtp_projection when the widths differ.
  Qwen3TtsCodePredictor(WeightSource& source, const std::string& prefix, const LlamaConfig& config,
                        int64_t talker_hidden, int32_t num_code_groups);

  /// Completes R frames: `talker_hidden` [R, talker_hidden] (final-norm hidden states that
  /// produced codebook 0) and `code0_embedding` [R, talker_hidden]. Returns codebooks 1.. per
  /// row, sampled with `sampling[r]`. On a backend that captures CUDA graphs
  /// (Backend::max_graph_batch() > 0) the frame replays its row bucket's graph of the chain when
  /// the rows' sampling stages (frame_chain_replays); otherwise it runs eagerly.
  std::vector<std::vector<int32_t>> predict(const at::Tensor& talker_hidden, const at::Tensor& code0_embedding,
                                            const std::vector<SamplingState*>& sampling, Sampler& sampler,
                                            CacheBuffers& cache, const ForwardContext& outer) const;

  /// Embedding of codebook k (1 <= k < num_code_groups) codes [N] -> [N, talker_hidden].
  at::Tensor embed(int32_t codebook, const at::Tensor& codes, at::ScalarType dtype) const;
  int64_t weight_bytes_per_frame() const;

 private:
  struct ChainContexts;

  at::Tensor project(const at::Tensor& x, const ForwardContext& ctx) const;
  std::vector<LayerCacheSpec> cache_layout() const;
  /// The chain: inputs [rows, 2, talker_hidden] (talker hidden, codebook-0 embedding) -> ids
  /// [rows, G - 1] where drawn, sub-step j's logits drawn by `sample(j, ...)`; the K/V of row r in
  /// block r of `scratch`. What the eager frame runs and the CUDA graph captures.
  at::Tensor chain(const at::Tensor& inputs, const ChainContexts& contexts, std::vector<LayerCache>& scratch,
                   const ChainSample& sample) const;

  LlamaConfig config_;
  int32_t num_code_groups_;
  std::vector<DecoderLayer> layers_;
  RMSNorm norm_;
  std::vector<Embedding> embeddings_;  ///< codec_embedding.{0..G-2}: codebooks 1..G-1
  std::vector<Linear> heads_;          ///< lm_head.{0..G-2}: codebooks 1..G-1
  Linear projection_;                  ///< small_to_mtp_projection, or undefined (identity)
  bool has_projection_ = false;
  std::unique_ptr<RotaryEmbedding> rope_;
  mutable std::optional<std::unique_ptr<FrameChainGraphs>> graphs_;  ///< made on the first frame
};

}  // namespace izwi
