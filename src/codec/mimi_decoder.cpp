#include "codec/mimi_decoder.h"

#include <fmt/format.h>

#include "common/check.h"
#include "io/weight_source.h"
#include "kernels/ops/activation_op.h"

namespace izwi {

MimiDecoder::MimiDecoder(WeightSource& weights, const MimiConfig& config, const std::string& prefix,
                         int64_t num_codebooks)
    : StreamingCodecDecoder(weights.device()),
      config_(config),
      num_codebooks_(num_codebooks),
      options_(at::TensorOptions().dtype(weights.compute_dtype()).device(weights.device())),
      backend_(&weights.backend()) {
  const MimiConfig& c = config_;
  IZWI_CHECK(num_codebooks >= 1 && num_codebooks <= c.quantizer.num_quantizers, "{} codebooks of {}", num_codebooks,
             c.quantizer.num_quantizers);
  quantizer_ = SplitRvq(weights, prefix + "quantizer", c.quantizer, false);
  if (c.resample_stride == 2) {
    upsample_ = CausalConvTranspose1d(weights, prefix + "upsample.conv", c.hidden_size, c.hidden_size, 4, 2,
                                      c.upsample_groups, false);
  }
  transformer_ = WindowedTransformer(weights, prefix + "decoder_transformer", c.transformer);

  const int64_t stages = static_cast<int64_t>(c.upsampling_ratios.size());
  int64_t channels = c.num_filters << stages;
  conv_in_ = CausalConv1d(weights, prefix + "decoder.layers.0.conv", c.hidden_size, channels, c.kernel_size);
  int64_t layer = 1;
  for (const int64_t ratio : c.upsampling_ratios) {
    Stage stage;
    // layers.<layer> is the ELU, layers.<layer + 1> the transposed conv, then the residual blocks.
    stage.up = CausalConvTranspose1d(weights, fmt::format("{}decoder.layers.{}.conv", prefix, layer + 1), channels,
                                     channels / 2, 2 * ratio, ratio);
    channels /= 2;
    int64_t dilation = 1;
    for (int64_t j = 0; j < c.num_residual_layers; ++j, dilation *= c.dilation_growth_rate) {
      stage.blocks.emplace_back(weights, fmt::format("{}decoder.layers.{}", prefix, layer + 2 + j), channels,
                                channels / c.compress, c.residual_kernel_size, dilation);
    }
    layer += 2 + c.num_residual_layers;
    stages_.push_back(std::move(stage));
  }
  conv_out_ = CausalConv1d(weights, fmt::format("{}decoder.layers.{}.conv", prefix, layer + 1), channels, 1,
                           c.last_kernel_size);

  weight_bytes_ = quantizer_.weight_bytes() + transformer_.weight_bytes() + conv_in_.weight_bytes() +
                  conv_out_.weight_bytes() + (c.resample_stride == 2 ? upsample_.weight_bytes() : 0);
  for (const Stage& stage : stages_) {
    weight_bytes_ += stage.up.weight_bytes();
    for (const SeanetResidualBlock& block : stage.blocks) weight_bytes_ += block.weight_bytes();
  }
}

void MimiDecoder::append_initial_state(std::vector<at::Tensor>& states) const {
  if (config_.resample_stride == 2) states.push_back(upsample_.initial_state(1, options_));
  transformer_.append_initial_state(states, 1, options_);
  states.push_back(conv_in_.initial_state(1, options_));
  for (const Stage& stage : stages_) {
    states.push_back(stage.up.initial_state(1, options_));
    for (const SeanetResidualBlock& block : stage.blocks) states.push_back(block.initial_state(1, options_));
  }
  states.push_back(conv_out_.initial_state(1, options_));
}

at::Tensor MimiDecoder::forward(const at::Tensor& codes, const std::vector<int64_t>& positions,
                                std::vector<at::Tensor>& states) const {
  size_t next = 0;
  const auto state = [&]() -> at::Tensor& { return states.at(next++); };

  at::Tensor h = quantizer_.decode(codes).to(options_.dtype());  // [B, hidden, n]
  if (config_.resample_stride == 2) h = upsample_.forward(h, state());
  // The transformer runs at the SEANet rate: a codec frame is resample_stride of its positions.
  std::vector<int64_t> seanet_positions;
  for (const int64_t p : positions) seanet_positions.push_back(p * config_.resample_stride);
  h = transformer_.forward(h.transpose(1, 2), seanet_positions, &states.at(next)).transpose(1, 2);
  next += 2 * static_cast<size_t>(config_.transformer.num_layers);
  h = conv_in_.forward(h, state());
  for (const Stage& stage : stages_) {
    h = stage.up.forward(ops::activation(*backend_, h, ops::Activation::Elu), state());
    for (const SeanetResidualBlock& block : stage.blocks) h = block.forward(h, state());
  }
  h = conv_out_.forward(ops::activation(*backend_, h, ops::Activation::Elu), state());
  IZWI_CHECK(next == states.size(), "used {} of {} codec states", next, states.size());
  return h.squeeze(1);
}

}  // namespace izwi
