#include "codec/qwen3_tts_codec_decoder.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "common/check.h"
#include "common/json_fields.h"
#include "io/config_fields.h"
#include "io/hf_config.h"
#include "io/weight_source.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

// Qwen3-TTS-Tokenizer-12Hz's decoder where a key is absent.
constexpr ConfigField<Qwen3TtsCodecConfig> kCodecFields[] = {
    {"codebook_size", &Qwen3TtsCodecConfig::codebook_size, 1, kMaxVocabSize, 2048},
    {"codebook_dim", &Qwen3TtsCodecConfig::codebook_dim, 1, kMaxHiddenSize, 512},
    {"num_quantizers", &Qwen3TtsCodecConfig::num_quantizers, 1, kMaxCodebooks, 16},
    {"latent_dim", &Qwen3TtsCodecConfig::latent_dim, 1, kMaxHiddenSize, 1024},
    {"decoder_dim", &Qwen3TtsCodecConfig::decoder_dim, 1, kMaxHiddenSize, 1536},
};
// num_key_value_heads and head_dim default to values derived from the others (set after reading).
constexpr ConfigField<WindowedTransformerConfig> kTransformerFields[] = {
    {"hidden_size", &WindowedTransformerConfig::hidden_size, 1, kMaxHiddenSize, 512},
    {"intermediate_size", &WindowedTransformerConfig::intermediate_size, 1, kMaxIntermediateSize, 1024},
    {"num_hidden_layers", &WindowedTransformerConfig::num_layers, 1, kMaxLayers, 8},
    {"num_attention_heads", &WindowedTransformerConfig::num_heads, 1, kMaxHeads, 16},
    {"num_key_value_heads", &WindowedTransformerConfig::num_kv_heads, 1, kMaxHeads},
    {"head_dim", &WindowedTransformerConfig::head_dim, 1, kMaxHeadDim},
    {"sliding_window", &WindowedTransformerConfig::sliding_window, 1, kMaxPositions, 72},
    {"rms_norm_eps", &WindowedTransformerConfig::norm_eps, 0, kMaxNormEps, 1e-5},
    {"rope_theta", &WindowedTransformerConfig::rope_theta, 0, kMaxRopeTheta, 10000.0, true},
};

}  // namespace

Qwen3TtsCodecConfig Qwen3TtsCodecConfig::parse(const JsonFields& decoder, const JsonFields* top) {
  Qwen3TtsCodecConfig c;
  read_fields(decoder, kCodecFields, c);
  c.upsample_rates = decoder.get_or<std::vector<int64_t>>("upsample_rates", {8, 5, 4, 3});
  c.upsampling_ratios = decoder.get_or<std::vector<int64_t>>("upsampling_ratios", {2, 2});
  WindowedTransformerConfig& t = c.transformer;
  t.input_dim = c.latent_dim;
  read_fields(decoder, kTransformerFields, t);
  if (!decoder.has("num_key_value_heads")) t.num_kv_heads = t.num_heads;
  if (!decoder.has("head_dim")) t.head_dim = t.hidden_size / std::max<int64_t>(t.num_heads, 1);
  t.attention_bias = decoder.get_or<bool>("attention_bias", false);

  const std::string& origin = decoder.origin();
  check_fields(origin, kCodecFields, c);
  check_fields(origin, kTransformerFields, t);
  require_in_range(origin, {{"upsample_rates (stages)", static_cast<int64_t>(c.upsample_rates.size()), 1, 8},
                            {"upsampling_ratios (stages)", static_cast<int64_t>(c.upsampling_ratios.size()), 0, 8}});
  if (c.codebook_dim % 2 != 0) fail(ErrorCode::InvalidFormat, "{}: field 'codebook_dim' must be even", origin);
  if (t.num_heads % t.num_kv_heads != 0) {
    fail(ErrorCode::InvalidFormat, "{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", origin,
         t.num_heads, t.num_kv_heads);
  }
  if (t.head_dim % 2 != 0) fail(ErrorCode::InvalidFormat, "{}: field 'head_dim' must be even", origin);
  for (const int64_t r : c.upsample_rates) require_in_range(origin, {{"upsample_rates", r, 1, kMaxUpsampleRate}});
  for (const int64_t r : c.upsampling_ratios) require_in_range(origin, {{"upsampling_ratios", r, 1, kMaxUpsampleRate}});
  if ((c.decoder_dim >> c.upsample_rates.size()) <= 0 ||
      (c.decoder_dim % (int64_t{1} << c.upsample_rates.size())) != 0) {
    fail(ErrorCode::InvalidFormat, "{}: decoder_dim {} cannot be halved {} times", origin, c.decoder_dim,
         c.upsample_rates.size());
  }
  const std::string act = decoder.get_or<std::string>("hidden_act", "silu");
  if (act != "silu") fail(ErrorCode::Unsupported, "{}: hidden_act '{}' is not supported (only silu)", origin, act);
  if (decoder.has("rope_scaling")) {
    fail(ErrorCode::Unsupported, "{}: rope_scaling is not supported by the codec decoder", origin);
  }
  if (top != nullptr) {
    c.sample_rate = top->get_or<int32_t>("output_sample_rate", 24000);
    require_in_range(top->origin(), {{"output_sample_rate", c.sample_rate, 1000, 768000}});
    if (top->has("decode_upsample_rate") && top->get<int64_t>("decode_upsample_rate") != c.samples_per_frame()) {
      fail(ErrorCode::InvalidFormat, "{}: decode_upsample_rate {} disagrees with the decoder's rates (product {})",
           top->origin(), top->get<int64_t>("decode_upsample_rate"), c.samples_per_frame());
    }
  }
  return c;
}

int64_t Qwen3TtsCodecConfig::samples_per_frame() const {
  int64_t total = 1;
  for (const int64_t r : upsample_rates) total *= r;
  for (const int64_t r : upsampling_ratios) total *= r;
  return total;
}

Qwen3TtsCodecDecoder::Qwen3TtsCodecDecoder(WeightSource& weights, const Qwen3TtsCodecConfig& config,
                                           const std::string& prefix)
    : StreamingCodecDecoder(weights.device()),
      config_(config),
      options_(at::TensorOptions().dtype(weights.compute_dtype()).device(weights.device())),
      per_stream_(weights.backend().cpu_kernels()) {
  const Qwen3TtsCodecConfig& c = config_;
  quantizer_ = SplitRvq(weights, prefix + "quantizer",
                        {c.num_quantizers, 1, c.codebook_size, c.codebook_dim / 2, c.codebook_dim}, false);
  pre_conv_ = CausalConv1d(weights, prefix + "pre_conv.conv", c.codebook_dim, c.latent_dim, 3);
  pre_transformer_ = WindowedTransformer(weights, prefix + "pre_transformer", c.transformer);
  for (size_t i = 0; i < c.upsampling_ratios.size(); ++i) {
    const int64_t r = c.upsampling_ratios[i];
    const std::string p = fmt::format("{}upsample.{}.", prefix, i);
    upsample_convs_.emplace_back(weights, p + "0.conv", c.latent_dim, c.latent_dim, r, r);
    upsample_blocks_.emplace_back(weights, p + "1", c.latent_dim);
  }
  decoder_in_ = CausalConv1d(weights, prefix + "decoder.0.conv", c.latent_dim, c.decoder_dim, 7);
  for (size_t i = 0; i < c.upsample_rates.size(); ++i) {
    const int64_t in_dim = c.decoder_dim >> i, out_dim = c.decoder_dim >> (i + 1), r = c.upsample_rates[i];
    const std::string p = fmt::format("{}decoder.{}.block.", prefix, i + 1);
    Block block;
    block.act = SnakeBeta(weights, p + "0", in_dim);
    block.up = CausalConvTranspose1d(weights, p + "1.conv", in_dim, out_dim, 2 * r, r);
    const int64_t dilations[] = {1, 3, 9};
    for (int j = 0; j < 3; ++j) {
      const std::string u = fmt::format("{}{}.", p, j + 2);
      ResidualUnit unit;
      unit.act1 = SnakeBeta(weights, u + "act1", out_dim);
      unit.conv1 = CausalConv1d(weights, u + "conv1.conv", out_dim, out_dim, 7, dilations[j]);
      unit.act2 = SnakeBeta(weights, u + "act2", out_dim);
      unit.conv2 = CausalConv1d(weights, u + "conv2.conv", out_dim, out_dim, 1);
      block.units.push_back(std::move(unit));
    }
    blocks_.push_back(std::move(block));
  }
  const int64_t out_dim = c.decoder_dim >> c.upsample_rates.size();
  const size_t n = c.upsample_rates.size();
  final_act_ = SnakeBeta(weights, fmt::format("{}decoder.{}", prefix, n + 1), out_dim);
  decoder_out_ = CausalConv1d(weights, fmt::format("{}decoder.{}.conv", prefix, n + 2), out_dim, 1, 7);

  weight_bytes_ = quantizer_.weight_bytes() + pre_conv_.weight_bytes() + pre_transformer_.weight_bytes() +
                  decoder_in_.weight_bytes() + final_act_.weight_bytes() + decoder_out_.weight_bytes();
  for (const auto& conv : upsample_convs_) weight_bytes_ += conv.weight_bytes();
  for (const auto& block : upsample_blocks_) weight_bytes_ += block.weight_bytes();
  for (const Block& block : blocks_) weight_bytes_ += block.weight_bytes();
}

int64_t Qwen3TtsCodecDecoder::Block::weight_bytes() const {
  int64_t bytes = act.weight_bytes() + up.weight_bytes();
  for (const ResidualUnit& u : units) {
    bytes += u.act1.weight_bytes() + u.conv1.weight_bytes() + u.act2.weight_bytes() + u.conv2.weight_bytes();
  }
  return bytes;
}

void Qwen3TtsCodecDecoder::append_initial_state(std::vector<at::Tensor>& states) const {
  states.push_back(pre_conv_.initial_state(1, options_));
  pre_transformer_.append_initial_state(states, 1, options_);
  for (size_t i = 0; i < upsample_convs_.size(); ++i) {
    states.push_back(upsample_convs_[i].initial_state(1, options_));
    states.push_back(upsample_blocks_[i].dwconv().initial_state(1, options_));
  }
  states.push_back(decoder_in_.initial_state(1, options_));
  for (const Block& block : blocks_) {
    states.push_back(block.up.initial_state(1, options_));
    for (const ResidualUnit& u : block.units) {
      states.push_back(u.conv1.initial_state(1, options_));
      states.push_back(u.conv2.initial_state(1, options_));
    }
  }
  states.push_back(decoder_out_.initial_state(1, options_));
}

at::Tensor Qwen3TtsCodecDecoder::forward(const at::Tensor& codes, const std::vector<int64_t>& positions,
                                         std::vector<at::Tensor>& states) const {
  size_t next = 0;
  const auto state = [&]() -> at::Tensor& { return states.at(next++); };

  at::Tensor h = quantizer_.decode(codes).to(options_.dtype());  // [B, codebook_dim, n]
  h = pre_conv_.forward(h, state());                             // [B, latent, n]
  h = pre_transformer_.forward(h.transpose(1, 2), positions, &states.at(next)).transpose(1, 2);
  next += 2 * static_cast<size_t>(config_.transformer.num_layers);
  for (size_t i = 0; i < upsample_convs_.size(); ++i) {
    h = upsample_convs_[i].forward(h, state());
    h = upsample_blocks_[i].forward(h, state());
  }
  h = decoder_in_.forward(h, state());
  // The decoder blocks multiply the samples per frame up to 1920 and make many elementwise passes
  // (SnakeBeta, residual sums) over them: on izwi's CPU kernels one stream at a time keeps a
  // stream's activations in cache, where all streams' together go to memory and back on every
  // pass. Measured at 16 streams (izwi-tts-bench, docs/benchmarks.md): 1.4-1.5x faster than the
  // batch, though each stream reads the blocks' weights again. Elsewhere (a GPU, libtorch's ops)
  // the batch runs as one: a launch per op for all streams.
  return per_stream_ ? run_blocks_per_stream(h, states, next) : run_blocks(h, states, next);
}

at::Tensor Qwen3TtsCodecDecoder::run_block(const Block& block, at::Tensor h, std::vector<at::Tensor>& states,
                                           size_t& next) const {
  h = block.up.forward(block.act.forward(h), states.at(next++));
  for (const ResidualUnit& u : block.units) {
    at::Tensor r = u.conv1.forward(h, states.at(next++), &u.act1);
    r = u.conv2.forward(r, states.at(next++), &u.act2);
    h = h + r;
  }
  return h;
}

at::Tensor Qwen3TtsCodecDecoder::run_blocks(at::Tensor h, std::vector<at::Tensor>& states, size_t next) const {
  size_t k = next;
  for (const Block& block : blocks_) h = run_block(block, h, states, k);
  h = decoder_out_.forward(h, states.at(k++), &final_act_).clamp(-1.0, 1.0);
  IZWI_CHECK(k == states.size(), "used {} of {} codec states", k, states.size());
  return h.squeeze(1);
}

at::Tensor Qwen3TtsCodecDecoder::run_blocks_per_stream(const at::Tensor& h, std::vector<at::Tensor>& states,
                                                       size_t next) const {
  const int64_t batch = h.size(0);
  if (batch == 1) return run_blocks(h, states, next);
  std::vector<at::Tensor> waves;
  for (int64_t b = 0; b < batch; ++b) {
    // This stream's rows of the remaining states; written back in place after its pass.
    std::vector<at::Tensor> own;
    for (size_t k = next; k < states.size(); ++k) own.push_back(states[k].narrow(0, b, 1));
    waves.push_back(run_blocks(h.narrow(0, b, 1), own, 0));
    for (size_t k = 0; k < own.size(); ++k) states[next + k].narrow(0, b, 1).copy_(own[k]);
  }
  return at::cat(waves, 0);
}

}  // namespace izwi
