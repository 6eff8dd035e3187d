#include "models/qwen3_tts/speaker_encoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "common/check.h"
#include "io/config_fields.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/pad1d_op.h"

namespace izwi {

namespace {

constexpr double kStatsEps = 1e-12;  // clamp of the variance before its root, as released

/// Weighted mean and standard deviation over time of x [B, C, T] with weights w [B, C or 1, T]
/// summing to 1 over time: [B, C] each.
std::pair<at::Tensor, at::Tensor> weighted_stats(const at::Tensor& x, const at::Tensor& w) {
  const at::Tensor mean = (w * x).sum(2);
  const at::Tensor var = (w * (x - mean.unsqueeze(2)).pow(2)).sum(2);
  return {mean, var.clamp_min(kStatsEps).sqrt()};
}

}  // namespace

namespace {

// Absent keys keep SpeakerEncoderConfig's defaults (the ECAPA-TDNN of Qwen3-TTS Base).
constexpr ConfigField<SpeakerEncoderConfig> kSpeakerEncoderFields[] = {
    {"mel_dim", &SpeakerEncoderConfig::mel_dim, 1, kMaxMelBins},
    {"enc_dim", &SpeakerEncoderConfig::enc_dim, 1, kMaxHiddenSize},
    {"enc_attention_channels", &SpeakerEncoderConfig::attention_channels, 1, kMaxHiddenSize},
    {"enc_res2net_scale", &SpeakerEncoderConfig::res2net_scale, 2, 64},
    {"enc_se_channels", &SpeakerEncoderConfig::se_channels, 1, kMaxHiddenSize},
    {"sample_rate", &SpeakerEncoderConfig::sample_rate, 1000, 768000},
};

}  // namespace

SpeakerEncoderConfig SpeakerEncoderConfig::parse(const JsonFields& f) {
  SpeakerEncoderConfig c;
  read_fields(f, kSpeakerEncoderFields, c);
  c.channels = f.get_or<std::vector<int64_t>>("enc_channels", c.channels);
  c.kernel_sizes = f.get_or<std::vector<int64_t>>("enc_kernel_sizes", c.kernel_sizes);
  c.dilations = f.get_or<std::vector<int64_t>>("enc_dilations", c.dilations);
  const std::string& origin = f.origin();
  check_fields(origin, kSpeakerEncoderFields, c);
  require_in_range(origin, {{"enc_channels (entries)", static_cast<int64_t>(c.channels.size()), 3, 64}});
  const size_t n = c.channels.size();
  if (c.kernel_sizes.size() != n || c.dilations.size() != n) {
    fail(ErrorCode::InvalidFormat,
         "{}: enc_channels, enc_kernel_sizes and enc_dilations must have one entry per "
         "block ({}, {}, {})",
         origin, n, c.kernel_sizes.size(), c.dilations.size());
  }
  for (size_t i = 0; i < n; ++i) {
    require_in_range(origin, {{"enc_channels", c.channels[i], 1, kMaxHiddenSize},
                              {"enc_kernel_sizes", c.kernel_sizes[i], 1, kMaxConvKernel},
                              {"enc_dilations", c.dilations[i], 1, 64}});
  }
  for (size_t i = 1; i + 1 < n; ++i) {
    if (c.channels[i] != c.channels[0] || c.channels[i] % c.res2net_scale != 0) {
      fail(ErrorCode::InvalidFormat,
           "{}: the SE-Res2Net blocks need enc_channels equal to the first ({}) and divisible by "
           "enc_res2net_scale {}, got {} at index {}",
           origin, c.channels[0], c.res2net_scale, c.channels[i], i);
    }
  }
  return c;
}

MagnitudeLogMelConfig SpeakerEncoderConfig::mel() const {
  MagnitudeLogMelConfig m;
  m.n_mels = static_cast<int>(mel_dim);
  m.sample_rate = sample_rate;
  m.f_max = sample_rate / 2.0;
  return m;
}

at::Tensor SpeakerEncoder::Conv::operator()(const at::Tensor& x) const {
  const int64_t total = dilation * (weight.size(2) - 1);
  const int64_t left = total / 2;
  const at::Tensor padded = ops::pad1d(x, left, total - left, ops::Pad1dMode::Reflect);
  ops::Conv1dOptions options;
  options.dilation = dilation;
  return ops::conv1d(*backend, padded, weight, bias, options);
}

at::Tensor SpeakerEncoder::SeRes2NetBlock::forward(const at::Tensor& x) const {
  const Backend& backend = *tdnn1.backend;
  const auto relu = [&](const at::Tensor& t) { return ops::activation(backend, t, ops::Activation::Relu); };
  const at::Tensor h = relu(tdnn1(x));
  const std::vector<at::Tensor> chunks = h.chunk(static_cast<int64_t>(res2net.size()) + 1, 1);
  std::vector<at::Tensor> outs = {chunks[0]};
  for (size_t i = 1; i < chunks.size(); ++i) {
    outs.push_back(relu(res2net[i - 1](i == 1 ? chunks[i] : chunks[i] + outs.back())));
  }
  const at::Tensor r = relu(tdnn2(at::cat(outs, 1)));
  const at::Tensor gate =
      ops::activation(backend, se2(relu(se1(r.mean(2, /*keepdim=*/true)))), ops::Activation::Sigmoid);
  return r * gate + x;
}

SpeakerEncoder::SpeakerEncoder(WeightSource& weights, const std::string& prefix, const SpeakerEncoderConfig& config)
    : config_(config) {
  const auto conv = [&](const std::string& name, int64_t out, int64_t in, int64_t kernel, int64_t dilation) {
    Conv c;
    c.weight = weights.take(prefix + name + ".weight", {out, in, kernel});
    c.bias = weights.take(prefix + name + ".bias", {out});
    c.dilation = dilation;
    c.backend = &weights.backend();
    return c;
  };
  const std::vector<int64_t>& ch = config.channels;
  const size_t n = ch.size();
  block0_ = conv("blocks.0.conv", ch[0], config.mel_dim, config.kernel_sizes[0], config.dilations[0]);
  const int64_t width = ch[0] / config.res2net_scale;
  for (size_t i = 1; i + 1 < n; ++i) {
    const std::string p = fmt::format("blocks.{}.", i);
    SeRes2NetBlock b;
    b.tdnn1 = conv(p + "tdnn1.conv", ch[i], ch[i - 1], 1, 1);
    for (int64_t j = 0; j + 1 < config.res2net_scale; ++j) {
      b.res2net.push_back(conv(fmt::format("{}res2net_block.blocks.{}.conv", p, j), width, width,
                               config.kernel_sizes[i], config.dilations[i]));
    }
    b.tdnn2 = conv(p + "tdnn2.conv", ch[i], ch[i], 1, 1);
    b.se1 = conv(p + "se_block.conv1", config.se_channels, ch[i], 1, 1);
    b.se2 = conv(p + "se_block.conv2", ch[i], config.se_channels, 1, 1);
    blocks_.push_back(std::move(b));
  }
  const int64_t aggregated = ch[1] * static_cast<int64_t>(n - 2);
  mfa_ = conv("mfa.conv", ch[n - 1], aggregated, config.kernel_sizes[n - 1], config.dilations[n - 1]);
  asp_tdnn_ = conv("asp.tdnn.conv", config.attention_channels, 3 * ch[n - 1], 1, 1);
  asp_conv_ = conv("asp.conv", ch[n - 1], config.attention_channels, 1, 1);
  fc_ = conv("fc", config.enc_dim, 2 * ch[n - 1], 1, 1);
}

at::Tensor SpeakerEncoder::mel(const at::Tensor& waveform) const {
  const int64_t min_samples = static_cast<int64_t>(kMinSeconds * config_.sample_rate);
  if (waveform.dim() != 1 || waveform.size(0) < min_samples) {
    fail(ErrorCode::InvalidArgument, "speaker reference audio: {} samples at {} Hz; at least {} s ({} samples) needed",
         waveform.numel(), config_.sample_rate, kMinSeconds, min_samples);
  }
  const float peak = waveform.abs().max().item<float>();
  if (!(peak >= kSilencePeak)) {
    fail(ErrorCode::InvalidArgument, "speaker reference audio is silent (peak {:.3g}, below {:.0e})", peak,
         kSilencePeak);
  }
  return magnitude_log_mel(waveform, config_.mel(), "speaker reference audio");
}

at::Tensor SpeakerEncoder::embed_mel(const at::Tensor& mel) const {
  if (mel.dim() != 2 || mel.size(1) != config_.mel_dim || mel.size(0) < 1) {
    fail(ErrorCode::InvalidArgument, "speaker encoder: expected log-mel [frames, {}], got [{}]", config_.mel_dim,
         fmt::join(mel.sizes(), ", "));
  }
  // Reflection padding needs more frames than the widest pad of any conv.
  int64_t widest = 0;
  for (size_t i = 0; i < config_.channels.size(); ++i) {
    widest = std::max(widest, config_.dilations[i] * (config_.kernel_sizes[i] - 1) / 2 + 1);
  }
  if (mel.size(0) <= widest) {
    fail(ErrorCode::InvalidArgument, "speaker encoder: {} frames; at least {} needed", mel.size(0), widest + 1);
  }
  const Backend& backend = *block0_.backend;
  const auto relu = [&](const at::Tensor& t) { return ops::activation(backend, t, ops::Activation::Relu); };
  at::Tensor x = relu(block0_(mel.to(block0_.weight.options()).t().unsqueeze(0)));  // [1, C, T]
  std::vector<at::Tensor> outs;
  for (const SeRes2NetBlock& b : blocks_) {
    x = b.forward(x);
    outs.push_back(x);
  }
  x = relu(mfa_(at::cat(outs, 1)));
  // Attentive statistics pooling: attention over time from each frame and the global statistics.
  const int64_t frames = x.size(2);
  const auto [mean, std] = weighted_stats(x, at::full({1, 1, frames}, 1.0 / frames, x.options()));
  const at::Tensor context =
      at::cat({x, mean.unsqueeze(2).expand({-1, -1, frames}), std.unsqueeze(2).expand({-1, -1, frames})}, 1);
  const at::Tensor attention =
      at::softmax(asp_conv_(ops::activation(backend, relu(asp_tdnn_(context)), ops::Activation::Tanh)), 2);
  const auto [pooled_mean, pooled_std] = weighted_stats(x, attention);
  return fc_(at::cat({pooled_mean, pooled_std}, 1).unsqueeze(2)).view({-1}).to(at::kCPU, at::kFloat);
}

SpeakerEncoderConfig speaker_encoder_config(const HfConfig& hf) {
  // CustomVoice and VoiceDesign configs carry a default speaker_encoder_config but no weights.
  const std::string type = hf.fields().get_or<std::string>("tts_model_type", "base");
  if (type != "base") {
    fail(ErrorCode::InvalidFormat, "{}: tts_model_type is '{}'; only Qwen3-TTS Base models have a speaker encoder",
         hf.path(), type);
  }
  const std::optional<JsonFields> section = hf.fields().object("speaker_encoder_config");
  if (!section) {
    fail(ErrorCode::InvalidFormat, "{}: no speaker_encoder_config (only Qwen3-TTS Base models have a speaker encoder)",
         hf.path());
  }
  return SpeakerEncoderConfig::parse(*section);
}

SpeakerEncoder load_speaker_encoder(const std::string& model_dir, const Backend& backend) {
  const SpeakerEncoderConfig config = speaker_encoder_config(HfConfig::load(model_dir));
  WeightLoader weights(model_dir, backend.dtype(), backend.dtype(), backend.device());
  weights.set_backend(backend);
  weights.skip_all_but("speaker_encoder.");
  SpeakerEncoder encoder(weights, "speaker_encoder.", config);
  weights.finish();
  return encoder;
}

}  // namespace izwi
