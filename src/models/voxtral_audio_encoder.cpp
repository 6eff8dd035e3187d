#include "models/voxtral_audio_encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/check.h"
#include "io/config_fields.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/attention_op.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/rope_op.h"

namespace izwi {

namespace {

// num_key_value_heads and head_dim default to values derived from the others (set after reading).
constexpr ConfigField<VoxtralEncoderConfig> kVoxtralEncoderFields[] = {
    {"hidden_size", &VoxtralEncoderConfig::hidden_size, 1, kMaxHiddenSize, kRequired},
    {"intermediate_size", &VoxtralEncoderConfig::intermediate_size, 1, kMaxIntermediateSize, kRequired},
    {"num_hidden_layers", &VoxtralEncoderConfig::num_layers, 1, kMaxLayers, kRequired},
    {"num_attention_heads", &VoxtralEncoderConfig::num_heads, 1, kMaxHeads, kRequired},
    {"num_key_value_heads", &VoxtralEncoderConfig::num_kv_heads, 1, kMaxHeads},
    {"head_dim", &VoxtralEncoderConfig::head_dim, 1, kMaxHeadDim},
    {"num_mel_bins", &VoxtralEncoderConfig::mel_bins, 1, kMaxMelBins},
    {"sliding_window", &VoxtralEncoderConfig::sliding_window, 0, kMaxPositions},
    {"rms_norm_eps", &VoxtralEncoderConfig::rms_norm_eps, 0, kMaxNormEps},
};

}  // namespace

VoxtralEncoderConfig VoxtralEncoderConfig::parse(const JsonFields& a, int64_t downsample, int64_t text_hidden_size) {
  VoxtralEncoderConfig c;
  read_fields(a, kVoxtralEncoderFields, c);
  if (!a.has("num_key_value_heads")) c.num_kv_heads = c.num_heads;
  if (!a.has("head_dim")) c.head_dim = c.num_heads > 0 ? c.hidden_size / c.num_heads : 0;
  c.rope = read_rope_config(a);
  c.downsample = downsample;
  c.text_hidden_size = text_hidden_size;
  check_fields(a.origin(), kVoxtralEncoderFields, c);
  if (c.num_heads % c.num_kv_heads != 0) {
    fail(ErrorCode::InvalidFormat, "{}: num_attention_heads is not a multiple of num_key_value_heads", a.origin());
  }
  const std::string act = a.get_or<std::string>("hidden_act", "silu");
  if (act != "silu") fail(ErrorCode::Unsupported, "{}: hidden_act '{}' is not supported (silu)", a.origin(), act);
  return c;
}

VoxtralAudioEncoder::VoxtralAudioEncoder(WeightSource& source, const VoxtralEncoderConfig& c) : config_(c) {
  const std::string p = "audio_tower.";
  conv1_weight_ = source.take(p + "embedder.conv1.weight", {c.hidden_size, c.mel_bins, 3});
  conv1_bias_ = source.take(p + "embedder.conv1.bias", {c.hidden_size});
  conv2_weight_ = source.take(p + "embedder.conv2.weight", {c.hidden_size, c.hidden_size, 3});
  conv2_bias_ = source.take(p + "embedder.conv2.bias", {c.hidden_size});
  const int64_t q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string l = fmt::format("{}layers.{}.", p, i);
    layers_.push_back(Layer{
        RMSNorm::load(source, l + "self_attn_layer_norm.weight", c.hidden_size, c.rms_norm_eps),
        Linear::load_stacked(source, {l + "self_attn.q_proj", l + "self_attn.k_proj", l + "self_attn.v_proj"},
                             {q_out, kv_out, kv_out}, c.hidden_size, std::vector<bool>{true, false, true}),
        Linear::load(source, l + "self_attn.o_proj", c.hidden_size, q_out, true),
        RMSNorm::load(source, l + "final_layer_norm.weight", c.hidden_size, c.rms_norm_eps),
        GatedMlp(source, l + "mlp", c.hidden_size, c.intermediate_size, /*gate_up_bias=*/false, /*down_bias=*/true)});
  }
  norm_ = RMSNorm::load(source, p + "norm.weight", c.hidden_size, c.rms_norm_eps);
  projector_in_ =
      Linear::load(source, "multi_modal_projector.linear_1", c.text_hidden_size, c.hidden_size * c.downsample, false);
  projector_out_ =
      Linear::load(source, "multi_modal_projector.linear_2", c.text_hidden_size, c.text_hidden_size, false);
  // Encoder positions grow with the stream: rotary angles are computed per call, not tabled.
  rope_ = std::make_unique<RotaryEmbedding>(c.rope, c.head_dim, 0, source.device(), source.compute_dtype());
}

VoxtralAudioEncoder::State VoxtralAudioEncoder::make_state() const {
  State s;
  const auto options = conv1_weight_.options();
  s.conv1_tail = at::zeros({config_.mel_bins, 2}, options);
  s.conv2_tail = at::zeros({config_.hidden_size, 1}, options);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    s.keys.push_back(at::zeros({0, config_.num_kv_heads, config_.head_dim}, options));
    s.values.push_back(at::zeros({0, config_.num_kv_heads, config_.head_dim}, options));
  }
  return s;
}

at::Tensor VoxtralAudioEncoder::attend(const Backend& backend, const at::Tensor& qkv, at::Tensor& keys,
                                       at::Tensor& values, int64_t first_pos) const {
  const VoxtralEncoderConfig& c = config_;
  const int64_t n = qkv.size(0), q_out = c.num_heads * c.head_dim, kv_out = c.num_kv_heads * c.head_dim;
  const at::Tensor positions =
      at::arange(first_pos, first_pos + n, at::TensorOptions().dtype(at::kLong).device(qkv.device()));
  const at::Tensor q =
      ops::rope(backend, qkv.narrow(1, 0, q_out).view({n, c.num_heads, c.head_dim}), positions, rope_->angles());
  const at::Tensor k = ops::rope(backend, qkv.narrow(1, q_out, kv_out).view({n, c.num_kv_heads, c.head_dim}), positions,
                                 rope_->angles());
  const at::Tensor v = qkv.narrow(1, q_out + kv_out, kv_out).view({n, c.num_kv_heads, c.head_dim});
  const at::Tensor all_k = at::cat({keys, k}, 0), all_v = at::cat({values, v}, 0);  // [total, kv_heads, head_dim]
  const int64_t total = keys.size(0) + n;
  // Causal over the kept frames and the new ones (the last n keys), within the window.
  const at::Tensor out = ops::attention(backend, q.permute({1, 0, 2}).unsqueeze(0),
                                        all_k.permute({1, 0, 2}).unsqueeze(0), all_v.permute({1, 0, 2}).unsqueeze(0),
                                        ops::AttentionOptions::causal(c.sliding_window))  // [1, heads, n, head_dim]
                             .squeeze(0)
                             .transpose(0, 1)
                             .reshape({n, q_out});
  // Keep only what later frames can still see.
  const int64_t keep = c.sliding_window > 0 ? std::min<int64_t>(total, c.sliding_window - 1) : total;
  keys = all_k.narrow(0, total - keep, keep).clone();
  values = all_v.narrow(0, total - keep, keep).clone();
  return out;
}

at::Tensor VoxtralAudioEncoder::conv_stem(const Backend& backend, State& state, const at::Tensor& mel) const {
  const VoxtralEncoderConfig& c = config_;
  IZWI_CHECK(mel.dim() == 2 && mel.size(0) == c.mel_bins && mel.size(1) % mel_frames_per_embedding() == 0,
             "mel chunk of shape [{}, {}] is not [{}, k * {}]", mel.size(0), mel.size(1), c.mel_bins,
             mel_frames_per_embedding());
  // Causal convolutions: the left padding is the previous chunk's tail (zeros at the start).
  const at::Tensor x1 = at::cat({state.conv1_tail, mel.to(conv1_weight_.device(), conv1_weight_.scalar_type())}, 1);
  state.conv1_tail = x1.narrow(1, x1.size(1) - 2, 2).clone();
  const auto gelu = [&](const at::Tensor& t) { return ops::activation(backend, t, ops::Activation::Gelu); };
  const at::Tensor h1 = gelu(ops::conv1d(backend, x1.unsqueeze(0), conv1_weight_, conv1_bias_).squeeze(0));
  const at::Tensor x2 = at::cat({state.conv2_tail, h1}, 1);
  state.conv2_tail = h1.narrow(1, h1.size(1) - 1, 1).clone();
  return gelu(ops::conv1d(backend, x2.unsqueeze(0), conv2_weight_, conv2_bias_, {/*stride=*/2}).squeeze(0))
      .t()
      .contiguous();
}

at::Tensor VoxtralAudioEncoder::encode(State& state, const at::Tensor& mel, const ForwardContext& ctx) const {
  return encode_batch({Job{&state, mel}}, ctx)[0];
}

int64_t VoxtralAudioEncoder::mel_frames_per_pass() const {
  // Encoder frames per pass: twice the window (the attention scores of a pass are then at most
  // [heads, 2W, 3W]), at least 64, at most 1024 (a model without a window keeps every K/V anyway).
  const int64_t window = config_.sliding_window > 0 ? config_.sliding_window : 512;
  const int64_t frames = std::min<int64_t>(std::max<int64_t>(2 * window, 64), 1024);
  const int64_t per = mel_frames_per_embedding();
  return std::max<int64_t>(per, (2 * frames) / per * per);  // conv2 has stride 2
}

std::vector<at::Tensor> VoxtralAudioEncoder::encode_batch(const std::vector<Job>& jobs,
                                                          const ForwardContext& ctx) const {
  const int64_t pass = mel_frames_per_pass();
  int64_t longest = 0;
  for (const Job& job : jobs) longest = std::max<int64_t>(longest, job.mel.size(1));
  if (longest <= pass) return encode_pass(jobs, ctx);
  // Passes of at most `pass` frames per stream, each continuing the streams' states.
  std::vector<std::vector<at::Tensor>> parts(jobs.size());
  for (int64_t offset = 0; offset < longest; offset += pass) {
    std::vector<Job> round;
    std::vector<size_t> which;
    for (size_t j = 0; j < jobs.size(); ++j) {
      const int64_t n = jobs[j].mel.size(1);
      if (n <= offset) continue;
      round.push_back(Job{jobs[j].state, jobs[j].mel.narrow(1, offset, std::min(pass, n - offset))});
      which.push_back(j);
    }
    std::vector<at::Tensor> out = encode_pass(round, ctx);
    for (size_t k = 0; k < which.size(); ++k) parts[which[k]].push_back(std::move(out[k]));
  }
  std::vector<at::Tensor> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (parts[j].empty()) {
      out.push_back(at::zeros({0, config_.text_hidden_size}, conv1_weight_.options()));
    } else {
      out.push_back(parts[j].size() == 1 ? parts[j][0] : at::cat(parts[j], 0));
    }
  }
  return out;
}

std::vector<at::Tensor> VoxtralAudioEncoder::encode_pass(const std::vector<Job>& jobs,
                                                         const ForwardContext& ctx) const {
  const VoxtralEncoderConfig& c = config_;
  std::vector<at::Tensor> stems;
  std::vector<int64_t> rows;
  for (const Job& job : jobs) {
    stems.push_back(conv_stem(*ctx.backend, *job.state, job.mel));
    rows.push_back(stems.back().size(0));
  }
  at::Tensor h = stems.size() == 1 ? stems[0] : at::cat(stems, 0);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = layers_[i];
    const at::Tensor qkv = layer.qkv(layer.attention_norm(h, ctx), ctx);
    std::vector<at::Tensor> attended;
    int64_t offset = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      State& state = *jobs[j].state;
      attended.push_back(
          attend(*ctx.backend, qkv.narrow(0, offset, rows[j]), state.keys[i], state.values[i], state.frames));
      offset += rows[j];
    }
    h = h + layer.out(attended.size() == 1 ? attended[0] : at::cat(attended, 0), ctx);
    h = h + layer.mlp(layer.mlp_norm(h, ctx), ctx);
  }
  for (size_t j = 0; j < jobs.size(); ++j) jobs[j].state->frames += rows[j];
  // Every stream's frame count is a multiple of `downsample`, so the rows group per stream.
  h = norm_(h, ctx).reshape({h.size(0) / c.downsample, c.hidden_size * c.downsample});
  const at::Tensor embeddings =
      projector_out_(ops::activation(*ctx.backend, projector_in_(h, ctx), ops::Activation::Gelu), ctx);
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (int64_t n : rows) {
    out.push_back(embeddings.narrow(0, offset, n / c.downsample));
    offset += n / c.downsample;
  }
  return out;
}

}  // namespace izwi
