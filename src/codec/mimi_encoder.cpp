#include "codec/mimi_encoder.h"

#include <fmt/format.h>

#include "common/check.h"
#include "io/weight_source.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/pad1d_op.h"

namespace izwi {

at::Tensor MimiEncoder::StridedConv::forward(const Backend& backend, const at::Tensor& x) const {
  const int64_t kernel = weight.size(2), length = x.size(2);
  const int64_t right = (length + stride - 1) / stride * stride - length;
  const at::Tensor padded = replicate ? ops::pad1d(x, kernel - stride, right, ops::Pad1dMode::Replicate)
                                      : at::constant_pad_nd(x, {kernel - stride, right});
  return ops::conv1d(backend, padded, weight, bias, {stride});
}

MimiEncoder::MimiEncoder(WeightSource& weights, const MimiConfig& config, const std::string& prefix,
                         int32_t default_codebooks)
    : config_(config),
      default_codebooks_(default_codebooks),
      options_(at::TensorOptions().dtype(weights.compute_dtype()).device(weights.device())),
      backend_(&weights.backend()) {
  const MimiConfig& c = config_;
  IZWI_CHECK(default_codebooks >= c.quantizer.num_semantic && default_codebooks <= c.quantizer.num_quantizers,
             "{} codebooks of {}", default_codebooks, c.quantizer.num_quantizers);
  int64_t channels = c.num_filters;
  conv_in_ = CausalConv1d(weights, prefix + "encoder.layers.0.conv", 1, channels, c.kernel_size);
  int64_t layer = 1;
  for (auto ratio = c.upsampling_ratios.rbegin(); ratio != c.upsampling_ratios.rend(); ++ratio) {
    Stage stage;
    int64_t dilation = 1;
    for (int64_t j = 0; j < c.num_residual_layers; ++j, dilation *= c.dilation_growth_rate) {
      stage.blocks.emplace_back(weights, fmt::format("{}encoder.layers.{}", prefix, layer + j), channels,
                                channels / c.compress, c.residual_kernel_size, dilation);
    }
    // Then the ELU, then the strided conv.
    const std::string conv = fmt::format("{}encoder.layers.{}.conv.", prefix, layer + c.num_residual_layers + 1);
    stage.down.weight = weights.take(conv + "weight", {2 * channels, channels, 2 * *ratio});
    stage.down.bias = weights.take(conv + "bias", {2 * channels});
    stage.down.stride = *ratio;
    channels *= 2;
    layer += c.num_residual_layers + 2;
    stages_.push_back(std::move(stage));
  }
  conv_out_ = CausalConv1d(weights, fmt::format("{}encoder.layers.{}.conv", prefix, layer + 1), channels, c.hidden_size,
                           c.last_kernel_size);
  transformer_ = WindowedTransformer(weights, prefix + "encoder_transformer", c.transformer);
  if (c.resample_stride == 2) {
    downsample_.weight = weights.take(prefix + "downsample.conv.weight", {c.hidden_size, c.hidden_size, 4});
    downsample_.stride = 2;
    downsample_.replicate = true;
  }
  quantizer_ = SplitRvq(weights, prefix + "quantizer", c.quantizer, true);
}

at::Tensor MimiEncoder::encode(const at::Tensor& samples, int32_t num_codebooks) const {
  const int64_t k = num_codebooks == 0 ? default_codebooks_ : num_codebooks;
  if (k < config_.quantizer.num_semantic || k > config_.quantizer.num_quantizers) {
    fail(ErrorCode::InvalidArgument, "num_codebooks {} is outside [{}, {}]", k, config_.quantizer.num_semantic,
         config_.quantizer.num_quantizers);
  }
  if (!samples.defined() || samples.dim() != 1 || samples.numel() == 0) {
    fail(ErrorCode::InvalidArgument, "encode: samples must be a non-empty 1-D tensor");
  }
  if (!at::isfinite(samples).all().item<bool>()) {
    fail(ErrorCode::InvalidArgument, "encode: samples hold NaN or Inf");
  }
  at::Tensor h = samples.to(options_).view({1, 1, -1});
  h = conv_in_.forward(h);
  for (const Stage& stage : stages_) {
    for (const SeanetResidualBlock& block : stage.blocks) h = block.forward(h);
    h = stage.down.forward(*backend_, ops::activation(*backend_, h, ops::Activation::Elu));
  }
  h = conv_out_.forward(ops::activation(*backend_, h, ops::Activation::Elu)).transpose(1, 2);  // [1, frames, hidden]

  std::vector<at::Tensor> states;
  transformer_.append_initial_state(states, 1, options_);
  std::vector<at::Tensor> pieces;
  for (int64_t start = 0; start < h.size(1); start += kTransformerChunk) {
    const int64_t n = std::min(kTransformerChunk, h.size(1) - start);
    pieces.push_back(transformer_.forward(h.narrow(1, start, n), {start}, states.data()));
  }
  h = at::cat(pieces, 1).transpose(1, 2);  // [1, hidden, frames]
  if (config_.resample_stride == 2) h = downsample_.forward(*backend_, h);
  return quantizer_.encode(h, k).squeeze(0).to(at::kCPU, at::kLong).contiguous();
}

}  // namespace izwi
