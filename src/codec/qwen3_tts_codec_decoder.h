#pragma once
// Qwen3-TTS 12 Hz speech-tokenizer decoder (Qwen3TTSTokenizerV2Decoder): split RVQ lookup,
// causal pre-conv, sliding-window pre-transformer, ConvNeXt upsampler, SnakeBeta/ConvTranspose
// waveform decoder, clamp to [-1, 1]. Every stage is causal with finite memory, so streaming
// keeps each stage's carry-over exactly and reproduces the whole-sequence decode.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/causal_conv.h"
#include "codec/convnext_block.h"
#include "codec/snake_beta.h"
#include "codec/split_rvq.h"
#include "codec/streaming_codec_decoder.h"
#include "codec/windowed_transformer.h"

namespace izwi {

class JsonFields;
class WeightSource;

struct Qwen3TtsCodecConfig {
  int64_t codebook_size = 2048;
  int64_t codebook_dim = 512;
  int64_t num_quantizers = 16;
  int64_t latent_dim = 1024;
  int64_t decoder_dim = 1536;
  std::vector<int64_t> upsample_rates;     ///< decoder blocks, e.g. 8, 5, 4, 3
  std::vector<int64_t> upsampling_ratios;  ///< ConvNeXt upsampler, e.g. 2, 2
  WindowedTransformerConfig transformer;
  int32_t sample_rate = 24000;

  /// Reads the decoder config (`decoder` = the flat config or the nested `decoder_config`);
  /// `top` is the enclosing speech-tokenizer config when there is one (sample rate, upsample rate).
  static Qwen3TtsCodecConfig parse(const JsonFields& decoder, const JsonFields* top);
  int64_t samples_per_frame() const;
};

class Qwen3TtsCodecDecoder final : public StreamingCodecDecoder {
 public:
  /// Takes its tensors from `weights` under `prefix` ("" or "decoder."), in the source's compute
  /// dtype on its device; the caller skips any other stored tensor and calls finish().
  Qwen3TtsCodecDecoder(WeightSource& weights, const Qwen3TtsCodecConfig& config, const std::string& prefix);

  int32_t num_codebooks() const override { return static_cast<int32_t>(config_.num_quantizers); }
  int32_t codebook_size() const override { return static_cast<int32_t>(config_.codebook_size); }
  int32_t sample_rate() const override { return config_.sample_rate; }
  int32_t samples_per_frame() const override { return static_cast<int32_t>(config_.samples_per_frame()); }
  int64_t weight_bytes() const override { return weight_bytes_; }

 protected:
  at::Tensor forward(const at::Tensor& codes, const std::vector<int64_t>& positions,
                     std::vector<at::Tensor>& states) const override;
  void append_initial_state(std::vector<at::Tensor>& states) const override;

 private:
  struct ResidualUnit {
    SnakeBeta act1, act2;
    CausalConv1d conv1, conv2;
  };
  struct Block {
    SnakeBeta act;
    CausalConvTranspose1d up;
    std::vector<ResidualUnit> units;
    int64_t weight_bytes() const;
  };

  /// One decoder block on h [B, C, T], reading and replacing states[next], states[next + 1], ...
  at::Tensor run_block(const Block& block, at::Tensor h, std::vector<at::Tensor>& states, size_t& next) const;
  /// The decoder blocks and the output layers on h [B, C, T] (the B streams together), reading and
  /// replacing states[next], ... to the last: the samples [B, T * upsampling].
  at::Tensor run_blocks(at::Tensor h, std::vector<at::Tensor>& states, size_t next) const;
  /// The same one stream at a time.
  at::Tensor run_blocks_per_stream(const at::Tensor& h, std::vector<at::Tensor>& states, size_t next) const;

  Qwen3TtsCodecConfig config_;
  at::TensorOptions options_;
  SplitRvq quantizer_;
  CausalConv1d pre_conv_;
  WindowedTransformer pre_transformer_;
  std::vector<CausalConvTranspose1d> upsample_convs_;
  std::vector<ConvNeXtBlock> upsample_blocks_;
  CausalConv1d decoder_in_;
  std::vector<Block> blocks_;
  SnakeBeta final_act_;
  CausalConv1d decoder_out_;
  int64_t weight_bytes_ = 0;
  bool per_stream_ = false;  ///< run_blocks_per_stream: on izwi's CPU kernels (cache locality)
};

}  // namespace izwi
