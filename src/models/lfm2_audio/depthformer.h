#pragma once
// LFM2-Audio's depthformer: turns the backbone's final hidden state of an audio-out position into
// one frame of Mimi codes, codebook by codebook (liquid-audio `_sample_audio_frame`).
// depth_linear maps the hidden state to one input per codebook; step k feeds input k plus the
// embedding of code k-1 through a small causal transformer (pre-RMSNorm blocks: packed-qkv GQA
// attention with per-head q/k RMSNorm and interleaved-pair RoPE, SwiGLU; no final norm) with its
// own K/V over the frame's steps, and codebook k's head (RMSNorm, to_logits) gives its logits.
// All rows of a step run as one batch.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/frame_chain_graphs.h"
#include "kernels/backend.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/step/sampling_state.h"
#include "sampling/sampler.h"

namespace izwi {

class WeightSource;

struct DepthformerConfig {
  int64_t input_dim = 0;  ///< The backbone's hidden size.
  int64_t dim = 0;
  int64_t layers = 0;
  int64_t heads = 32;  ///< liquid-audio's defaults (not in config.json).
  int64_t kv_heads = 8;
  int64_t ffn_dim = 0;  ///< SwiGLU width: int(2 * 4 * dim / 3) rounded up to a multiple of 256.
  int64_t codebooks = 8;
  int64_t vocab = 2049;  ///< Codes per codebook, end-of-audio (2048) included.
  double rope_theta = 1e6;
  double norm_eps = 1e-5;
  bool tie = false;  ///< to_logits shares the codebook's embedding.
};

class Depthformer {
 public:
  Depthformer() = default;
  Depthformer(WeightSource& weights, const DepthformerConfig& config);

  /// hidden [B, input_dim] -> one frame of `codebooks` codes per row, sampled with
  /// `sampling[b]` (each codebook's logits in turn), with `backend`'s ops. On a backend that
  /// captures CUDA graphs (Backend::max_graph_batch() > 0) the frame replays its row bucket's
  /// graph of the chain when the rows' sampling stages (frame_chain_replays); otherwise it runs
  /// eagerly.
  std::vector<std::vector<int32_t>> frames(const at::Tensor& hidden, const std::vector<SamplingState*>& sampling,
                                           Sampler& sampler, const Backend& backend) const;
  int64_t weight_bytes() const;

 private:
  struct Layer {
    at::Tensor operator_norm, q_norm, k_norm, ffn_norm;
    Linear qkv, out, w13, w2;  ///< w13 [2 * ffn_dim, dim]: w1 then w3
  };
  struct Head {
    Embedding embedding;  ///< the previous codebook's code in; with tied weights also to_logits' table
    at::Tensor norm;
    Linear to_logits;
  };
  /// hidden [B, input_dim] -> ids [B, codebooks] where drawn, codebook k's logits drawn by
  /// `sample(k, ...)`. What the eager frame runs and the CUDA graph captures.
  at::Tensor chain(const at::Tensor& hidden, const Backend& backend, const ChainSample& sample) const;
  /// x [B, dim] at step `step`; `keys` / `values` [B, kv_heads, step, head_dim] per layer, appended.
  at::Tensor step(at::Tensor x, int64_t step, std::vector<at::Tensor>& keys, std::vector<at::Tensor>& values,
                  const Backend& backend) const;
  /// Rotates interleaved pairs (2i, 2i + 1) of the last dim by position `step`.
  at::Tensor rope(const at::Tensor& x, int64_t step) const;

  DepthformerConfig config_;
  int64_t head_dim_ = 0;
  Linear depth_linear_;
  std::vector<Layer> layers_;
  std::vector<Head> heads_;
  at::Tensor cos_, sin_;                                             ///< [codebooks, head_dim / 2]
  mutable std::optional<std::unique_ptr<FrameChainGraphs>> graphs_;  ///< made on the first frame
};

}  // namespace izwi
