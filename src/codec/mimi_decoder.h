#pragma once
// Mimi's decoder (transformers MimiModel.decode): split RVQ lookup of the first K codebooks,
// depthwise transposed-conv upsample to the SEANet rate, the causal sliding-window decoder
// transformer (positions count SEANet frames), and the SEANet decoder (ELU, transposed convs,
// residual blocks). Every stage is causal with finite memory, so streaming keeps each stage's
// carry-over and reproduces the whole-sequence decode.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "codec/causal_conv.h"
#include "codec/mimi_config.h"
#include "codec/seanet_residual_block.h"
#include "codec/split_rvq.h"
#include "codec/streaming_codec_decoder.h"
#include "codec/windowed_transformer.h"

namespace izwi {

class Backend;
class WeightSource;

class MimiDecoder final : public StreamingCodecDecoder {
 public:
  /// Takes the decoder's tensors (transformers' names under `prefix`) from `weights`; decodes the
  /// first `num_codebooks` codebooks (1..the checkpoint's). The caller skips the rest and calls finish().
  MimiDecoder(WeightSource& weights, const MimiConfig& config, const std::string& prefix, int64_t num_codebooks);

  int32_t num_codebooks() const override { return static_cast<int32_t>(num_codebooks_); }
  int32_t codebook_size() const override { return static_cast<int32_t>(config_.quantizer.codebook_size); }
  int32_t sample_rate() const override { return config_.sample_rate; }
  int32_t samples_per_frame() const override { return static_cast<int32_t>(config_.samples_per_frame()); }
  int64_t weight_bytes() const override { return weight_bytes_; }

 protected:
  at::Tensor forward(const at::Tensor& codes, const std::vector<int64_t>& positions,
                     std::vector<at::Tensor>& states) const override;
  void append_initial_state(std::vector<at::Tensor>& states) const override;

 private:
  struct Stage {
    CausalConvTranspose1d up;
    std::vector<SeanetResidualBlock> blocks;
  };

  MimiConfig config_;
  int64_t num_codebooks_;
  at::TensorOptions options_;
  const Backend* backend_;  ///< the weights' (WeightSource::backend)
  SplitRvq quantizer_;
  CausalConvTranspose1d upsample_;  ///< Used when config_.resample_stride is 2.
  WindowedTransformer transformer_;
  CausalConv1d conv_in_;
  std::vector<Stage> stages_;
  CausalConv1d conv_out_;
  int64_t weight_bytes_ = 0;
};

}  // namespace izwi
