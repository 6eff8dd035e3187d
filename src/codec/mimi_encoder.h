#pragma once
// Mimi's encoder (transformers MimiModel.encode): SEANet encoder (causal convs, strided ones
// zero-padded on the right to a whole frame), the causal sliding-window encoder transformer,
// the stride-2 downsample conv (replicate padding), and split-RVQ encoding. The transformer runs
// over the sequence in bounded chunks through its streaming state, which is exact.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "codec/causal_conv.h"
#include "codec/codec_encoder.h"
#include "codec/mimi_config.h"
#include "codec/seanet_residual_block.h"
#include "codec/split_rvq.h"
#include "codec/windowed_transformer.h"

namespace izwi {

class Backend;
class WeightSource;

class MimiEncoder final : public CodecEncoder {
 public:
  /// Takes the encoder's tensors (transformers' names under `prefix`) from `weights`; the caller
  /// skips the rest and calls finish().
  MimiEncoder(WeightSource& weights, const MimiConfig& config, const std::string& prefix, int32_t default_codebooks);

  int32_t max_codebooks() const override { return static_cast<int32_t>(config_.quantizer.num_quantizers); }
  int32_t default_codebooks() const override { return default_codebooks_; }
  int32_t codebook_size() const override { return static_cast<int32_t>(config_.quantizer.codebook_size); }
  int32_t sample_rate() const override { return config_.sample_rate; }
  int32_t samples_per_frame() const override { return static_cast<int32_t>(config_.samples_per_frame()); }
  at::Tensor encode(const at::Tensor& samples, int32_t num_codebooks = 0) const override;

  /// Frames of the transformer run per chunk (bounds the attention's memory).
  static constexpr int64_t kTransformerChunk = 256;

 private:
  /// A causal conv with stride: left padding kernel - stride, right padding to a whole stride.
  struct StridedConv {
    at::Tensor weight, bias;
    int64_t stride = 1;
    bool replicate = false;  ///< Pad by repeating the edge columns instead of zeros.
    at::Tensor forward(const Backend& backend, const at::Tensor& x) const;
  };
  struct Stage {
    std::vector<SeanetResidualBlock> blocks;
    StridedConv down;
  };

  MimiConfig config_;
  int32_t default_codebooks_;
  at::TensorOptions options_;
  const Backend* backend_;  ///< the weights' (WeightSource::backend)
  CausalConv1d conv_in_;
  std::vector<Stage> stages_;
  CausalConv1d conv_out_;
  WindowedTransformer transformer_;
  StridedConv downsample_;  ///< Used when config_.resample_stride is 2.
  SplitRvq quantizer_;
};

}  // namespace izwi
