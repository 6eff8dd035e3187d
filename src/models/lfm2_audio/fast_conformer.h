#pragma once
// LFM2-Audio's audio encoder: NeMo's FastConformer ConformerEncoder as liquid-audio releases it,
// in eval mode over one whole utterance (full-context attention, so it does not stream).
//  - dw_striding subsampling: Conv2d(1 -> C, k3 s2 p1) + ReLU, then per further factor of two
//    [depthwise Conv2d(k3 s2 p1), pointwise Conv2d(1x1), ReLU]; channels x frequency flattened
//    into a Linear to d_model.
//  - Transformer-XL relative positions (sinusoids for L-1 down to -(L-1)).
//  - Layers: half-step FF (LN, Linear, SiLU, Linear), rel-pos MHSA with per-layer pos_bias_u/v
//    and rel_shift, conv module (pointwise, GLU, depthwise, BatchNorm with running stats, SiLU,
//    pointwise), half-step FF, final LayerNorm.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "io/weight_source.h"

namespace izwi {

struct FastConformerConfig {
  int64_t feat_in = 128;
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 4;
  int64_t ff_expansion_factor = 4;
  int64_t subsampling_factor = 8;         ///< A power of two: one stride-2 conv per factor of two.
  int64_t subsampling_conv_channels = 0;  ///< -1 in the config means d_model.
  int64_t conv_kernel_size = 31;          ///< Odd; symmetric padding.
  bool xscaling = true;                   ///< Scale the subsampled input by sqrt(d_model).

  /// From config.json's `encoder` section (NeMo's argument names and defaults). Variants this
  /// encoder does not implement (other subsampling or attention types, causal or limited
  /// context, reduction, an output projection) are Unsupported; sizes out of range are
  /// InvalidFormat naming the field.
  static FastConformerConfig parse(const JsonFields& encoder);

  int64_t head_dim() const { return d_model / n_heads; }
  int64_t ff_dim() const { return d_model * ff_expansion_factor; }
  /// Frequency bins left after subsampling: feat_in halved (rounding up) per stride-2 conv.
  int64_t subsampled_features() const;
};

class FastConformerEncoder {
 public:
  /// Takes the encoder's tensors under `prefix` (e.g. "conformer"): pre_encode.*, layers.N.*.
  /// The batch norms' num_batches_tracked counters are not read; skip them in the source. Runs on
  /// the source's backend, which must outlive it.
  FastConformerEncoder(WeightSource& source, const FastConformerConfig& config,
                       const std::string& prefix = "conformer");

  /// mel [feat_in, frames] (NeMo log-mel, every frame kept) -> [output_frames(frames), d_model]
  /// in the source's compute dtype, on its device. Throws InvalidArgument for a mel of another
  /// shape or with no frames.
  at::Tensor encode(const at::Tensor& mel) const;
  /// Encoder frames for `mel_frames` input frames: ceil(x / 2) per stride-2 conv, as NeMo's
  /// calc_length computes (ceil(x / 8) for the usual factor 8).
  int64_t output_frames(int64_t mel_frames) const;
  const FastConformerConfig& config() const { return config_; }

 private:
  struct Norm {
    at::Tensor weight, bias;
  };
  struct FeedForward {
    at::Tensor w1, b1, w2, b2;
  };
  struct Layer {
    Norm ff1_norm;
    FeedForward ff1;
    Norm attention_norm;
    at::Tensor qkv_weight, qkv_bias;  ///< linear_q, linear_k, linear_v stacked: [3 * d, d]
    at::Tensor out_weight, out_bias, pos_weight;
    at::Tensor bias_u, bias_v;  ///< [heads, head_dim]
    Norm conv_norm;
    at::Tensor pointwise1_weight, pointwise1_bias;  ///< [2 * d, d] (a k1 conv as a matrix)
    at::Tensor depthwise_weight, depthwise_bias;    ///< [d, 1, kernel], the batch norm folded in
    at::Tensor pointwise2_weight, pointwise2_bias;  ///< [d, d]
    Norm ff2_norm;
    FeedForward ff2;
    Norm out_norm;
  };
  struct ConvStage {
    at::Tensor depthwise_weight, depthwise_bias, pointwise_weight, pointwise_bias;
  };

  Norm load_norm(WeightSource& source, const std::string& name) const;
  FeedForward load_feed_forward(WeightSource& source, const std::string& name) const;
  /// mel [feat_in, T] -> [T', d_model] through the striding convs and the output Linear.
  at::Tensor subsample(const at::Tensor& mel) const;
  /// Sinusoids [2L - 1, d_model] for relative positions L-1 down to -(L-1).
  at::Tensor relative_positions(int64_t length, const at::TensorOptions& options) const;
  at::Tensor feed_forward(const FeedForward& ff, const at::Tensor& x) const;
  at::Tensor attention(const Layer& layer, const at::Tensor& x, const at::Tensor& positions) const;
  at::Tensor convolution(const Layer& layer, const at::Tensor& x) const;

  FastConformerConfig config_;
  const Backend* backend_;                ///< the source's (WeightSource::backend)
  at::Tensor conv0_weight_, conv0_bias_;  ///< [C, 1, 3, 3]
  std::vector<ConvStage> stages_;         ///< log2(subsampling_factor) - 1 of them
  at::Tensor subsample_out_weight_, subsample_out_bias_;
  std::vector<Layer> layers_;
};

}  // namespace izwi
