#include "models/lfm2_audio/fast_conformer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "common/check.h"
#include "io/config_fields.h"
#include "io/hf_config.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/attention_op.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/conv2d_op.h"
#include "kernels/ops/layer_norm_op.h"
#include "kernels/ops/linear_op.h"

namespace izwi {
namespace {

constexpr double kLayerNormEps = 1e-5;  // torch.nn.LayerNorm / BatchNorm1d defaults
constexpr double kBatchNormEps = 1e-5;

void require_option(const JsonFields& e, const std::string& key, const std::string& fallback,
                    const std::string& supported) {
  const std::string value = e.get_or<std::string>(key, fallback);
  if (value != supported) {
    fail(ErrorCode::Unsupported, "{}: field '{}' is '{}'; only '{}' is supported", e.origin(), key, value, supported);
  }
}

// att_context_size is [left, right] or a list of them (the first is the inference default);
// only unlimited context (-1, -1) is implemented.
void require_full_context(const JsonFields& e) {
  const nlohmann::json& json = e.json();
  if (!json.contains("att_context_size") || json["att_context_size"].is_null()) return;
  const nlohmann::json* sizes = &json["att_context_size"];
  if (sizes->is_array() && !sizes->empty() && (*sizes)[0].is_array()) sizes = &(*sizes)[0];
  bool full = sizes->is_array();
  if (full) {
    for (const nlohmann::json& v : *sizes) full = full && v.is_number_integer() && v.get<int64_t>() < 0;
  }
  if (!full) {
    fail(ErrorCode::Unsupported, "{}: field 'att_context_size' is {}; only unlimited context [-1, -1] is supported",
         e.origin(), json["att_context_size"].dump());
  }
}

// NeMo's defaults where they differ from the struct's: subsampling_factor 4, and
// subsampling_conv_channels -1 (= d_model).
constexpr ConfigField<FastConformerConfig> kFastConformerFields[] = {
    {"feat_in", &FastConformerConfig::feat_in, 1, kMaxMelBins},
    {"n_layers", &FastConformerConfig::n_layers, 1, kMaxLayers, kRequired},
    {"d_model", &FastConformerConfig::d_model, 2, kMaxHiddenSize, kRequired},
    {"n_heads", &FastConformerConfig::n_heads, 1, kMaxHeads},
    {"ff_expansion_factor", &FastConformerConfig::ff_expansion_factor, 1, 64},
    {"subsampling_factor", &FastConformerConfig::subsampling_factor, 2, 1024, 4},
    {"subsampling_conv_channels", &FastConformerConfig::subsampling_conv_channels, 1, kMaxHiddenSize, -1},
    {"conv_kernel_size", &FastConformerConfig::conv_kernel_size, 1, 1023},
};

}  // namespace

FastConformerConfig FastConformerConfig::parse(const JsonFields& e) {
  FastConformerConfig c;
  const std::string& origin = e.origin();
  read_fields(e, kFastConformerFields, c);
  if (c.subsampling_conv_channels == -1) c.subsampling_conv_channels = c.d_model;
  c.xscaling = e.get_or<bool>("xscaling", c.xscaling);
  check_fields(origin, kFastConformerFields, c);
  if (c.d_model % c.n_heads != 0 || c.d_model % 2 != 0) {
    fail(ErrorCode::InvalidFormat, "{}: field 'd_model' ({}) must be even and a multiple of n_heads ({})", origin,
         c.d_model, c.n_heads);
  }
  if ((c.subsampling_factor & (c.subsampling_factor - 1)) != 0) {
    fail(ErrorCode::InvalidFormat, "{}: field 'subsampling_factor' ({}) must be a power of two", origin,
         c.subsampling_factor);
  }
  if (c.conv_kernel_size % 2 == 0) {
    fail(ErrorCode::InvalidFormat, "{}: field 'conv_kernel_size' ({}) must be odd", origin, c.conv_kernel_size);
  }
  require_option(e, "subsampling", "striding", "dw_striding");
  require_option(e, "self_attention_model", "rel_pos", "rel_pos");
  require_option(e, "conv_norm_type", "batch_norm", "batch_norm");
  require_full_context(e);
  const int64_t feat_out = e.get_or<int64_t>("feat_out", -1);
  if (feat_out > 0 && feat_out != c.d_model) {
    fail(ErrorCode::Unsupported, "{}: field 'feat_out' ({}): an output projection is not supported", origin, feat_out);
  }
  if (e.get_or<bool>("causal_downsampling", false)) {
    fail(ErrorCode::Unsupported, "{}: field 'causal_downsampling' true is not supported", origin);
  }
  if (e.has("reduction") && e.get_or<int64_t>("reduction_factor", 1) > 1) {
    fail(ErrorCode::Unsupported, "{}: field 'reduction' (subsampling inside the encoder) is not supported", origin);
  }
  if (!e.get_or<bool>("use_bias", true)) {
    fail(ErrorCode::Unsupported, "{}: field 'use_bias' false is not supported", origin);
  }
  if (e.has("conv_context_size")) {
    const nlohmann::json& context = e.json()["conv_context_size"];
    const int64_t half = (c.conv_kernel_size - 1) / 2;
    if (context != nlohmann::json::array({half, half})) {
      fail(ErrorCode::Unsupported, "{}: field 'conv_context_size' is {}; only the symmetric [{}, {}] is supported",
           origin, context.dump(), half, half);
    }
  }
  // untie_biases only decides whether pos_bias_u/v are shared; every layer stores its own copy.
  return c;
}

int64_t FastConformerConfig::subsampled_features() const {
  int64_t features = feat_in;
  for (int64_t f = subsampling_factor; f > 1; f /= 2) features = (features - 1) / 2 + 1;
  return features;
}

int64_t FastConformerEncoder::output_frames(int64_t mel_frames) const {
  int64_t frames = mel_frames;
  // NeMo's calc_length for k3 s2 with padding 1 on each side: floor((x + 2 - 3) / 2) + 1.
  for (int64_t f = config_.subsampling_factor; f > 1; f /= 2) frames = (frames - 1) / 2 + 1;
  return frames;
}

FastConformerEncoder::Norm FastConformerEncoder::load_norm(WeightSource& source, const std::string& name) const {
  return Norm{source.take(name + ".weight", {config_.d_model}), source.take(name + ".bias", {config_.d_model})};
}

FastConformerEncoder::FeedForward FastConformerEncoder::load_feed_forward(WeightSource& source,
                                                                          const std::string& name) const {
  const int64_t d = config_.d_model, ff = config_.ff_dim();
  return FeedForward{source.take_matrix(name + ".linear1.weight", {ff, d}), source.take(name + ".linear1.bias", {ff}),
                     source.take_matrix(name + ".linear2.weight", {d, ff}), source.take(name + ".linear2.bias", {d})};
}

FastConformerEncoder::FastConformerEncoder(WeightSource& source, const FastConformerConfig& c,
                                           const std::string& prefix)
    : config_(c), backend_(&source.backend()) {
  const int64_t d = c.d_model, channels = c.subsampling_conv_channels;
  // pre_encode.conv is an nn.Sequential: conv 0, ReLU 1, then [depthwise, pointwise, ReLU] per stage.
  const std::string conv = prefix + ".pre_encode.conv.";
  conv0_weight_ = source.take(conv + "0.weight", {channels, 1, 3, 3});
  conv0_bias_ = source.take(conv + "0.bias", {channels});
  int64_t index = 2;
  for (int64_t f = c.subsampling_factor / 2; f > 1; f /= 2, index += 3) {
    stages_.push_back(ConvStage{source.take(fmt::format("{}{}.weight", conv, index), {channels, 1, 3, 3}),
                                source.take(fmt::format("{}{}.bias", conv, index), {channels}),
                                source.take(fmt::format("{}{}.weight", conv, index + 1), {channels, channels, 1, 1}),
                                source.take(fmt::format("{}{}.bias", conv, index + 1), {channels})});
  }
  subsample_out_weight_ =
      source.take_matrix(prefix + ".pre_encode.out.weight", {d, channels * c.subsampled_features()});
  subsample_out_bias_ = source.take(prefix + ".pre_encode.out.bias", {d});

  for (int64_t i = 0; i < c.n_layers; ++i) {
    const std::string l = fmt::format("{}.layers.{}.", prefix, i);
    Layer layer;
    layer.ff1_norm = load_norm(source, l + "norm_feed_forward1");
    layer.ff1 = load_feed_forward(source, l + "feed_forward1");
    layer.attention_norm = load_norm(source, l + "norm_self_att");
    const std::string a = l + "self_attn.";
    layer.qkv_weight =
        at::cat({source.take_matrix(a + "linear_q.weight", {d, d}), source.take_matrix(a + "linear_k.weight", {d, d}),
                 source.take_matrix(a + "linear_v.weight", {d, d})});
    layer.qkv_bias = at::cat({source.take(a + "linear_q.bias", {d}), source.take(a + "linear_k.bias", {d}),
                              source.take(a + "linear_v.bias", {d})});
    layer.out_weight = source.take_matrix(a + "linear_out.weight", {d, d});
    layer.out_bias = source.take(a + "linear_out.bias", {d});
    layer.pos_weight = source.take_matrix(a + "linear_pos.weight", {d, d});
    layer.bias_u = source.take(a + "pos_bias_u", {c.n_heads, c.head_dim()});
    layer.bias_v = source.take(a + "pos_bias_v", {c.n_heads, c.head_dim()});
    layer.conv_norm = load_norm(source, l + "norm_conv");
    const std::string m = l + "conv.";
    layer.pointwise1_weight = source.take_matrix(m + "pointwise_conv1.weight", {2 * d, d, 1}).view({2 * d, d});
    layer.pointwise1_bias = source.take(m + "pointwise_conv1.bias", {2 * d});
    // The batch norm (running statistics, eval mode) is an affine map per channel: folded into the
    // depthwise conv before it (in float32, then the compute dtype), one op where there were two.
    const auto take = [&](const std::string& name, const std::vector<int64_t>& shape) {
      return source.take(m + name, shape).to(at::kFloat);
    };
    const at::Tensor bn_scale =
        take("batch_norm.weight", {d}) * (take("batch_norm.running_var", {d}) + kBatchNormEps).rsqrt();
    layer.depthwise_weight = (take("depthwise_conv.weight", {d, 1, c.conv_kernel_size}) * bn_scale.view({d, 1, 1}))
                                 .to(source.compute_dtype())
                                 .contiguous();
    layer.depthwise_bias = ((take("depthwise_conv.bias", {d}) - take("batch_norm.running_mean", {d})) * bn_scale +
                            take("batch_norm.bias", {d}))
                               .to(source.compute_dtype());
    layer.pointwise2_weight = source.take_matrix(m + "pointwise_conv2.weight", {d, d, 1}).view({d, d});
    layer.pointwise2_bias = source.take(m + "pointwise_conv2.bias", {d});
    layer.ff2_norm = load_norm(source, l + "norm_feed_forward2");
    layer.ff2 = load_feed_forward(source, l + "feed_forward2");
    layer.out_norm = load_norm(source, l + "norm_out");
    layers_.push_back(std::move(layer));
  }
}

at::Tensor FastConformerEncoder::subsample(const at::Tensor& mel) const {
  // [1, 1, time, freq]: time is the conv's height, as NeMo's (batch, time, features) input.
  at::Tensor x = mel.t().unsqueeze(0).unsqueeze(0);
  const Backend& backend = *backend_;
  const auto relu = [&](const at::Tensor& t) { return ops::activation(backend, t, ops::Activation::Relu); };
  x = relu(ops::conv2d(backend, x, conv0_weight_, conv0_bias_, /*stride=*/2, /*padding=*/1));
  const int64_t channels = config_.subsampling_conv_channels;
  for (const ConvStage& stage : stages_) {
    x = ops::conv2d(backend, x, stage.depthwise_weight, stage.depthwise_bias, /*stride=*/2, /*padding=*/1,
                    /*groups=*/channels);
    x = relu(ops::conv2d(backend, x, stage.pointwise_weight, stage.pointwise_bias));
  }
  // (1, C, T', F') -> (T', C * F'): channels outer, frequency inner.
  const int64_t frames = x.size(2);
  x = x.squeeze(0).transpose(0, 1).reshape({frames, channels * x.size(3)});
  return ops::linear(backend, x, subsample_out_weight_, subsample_out_bias_);
}

at::Tensor FastConformerEncoder::relative_positions(int64_t length, const at::TensorOptions& options) const {
  const int64_t d = config_.d_model;
  // In float32 as NeMo's create_pe, with its exp form of the inverse frequencies.
  const at::TensorOptions f32 = options.dtype(at::kFloat);
  const at::Tensor positions = at::arange(length - 1, -length, -1, f32).unsqueeze(1);
  const at::Tensor inv_freq = at::exp(at::arange(0, d, 2, f32) * (-std::log(10000.0) / static_cast<double>(d)));
  const at::Tensor angles = positions * inv_freq;  // [2L - 1, d / 2]
  // sin in the even columns, cos in the odd ones.
  return at::stack({at::sin(angles), at::cos(angles)}, 2).reshape({2 * length - 1, d}).to(options.dtype());
}

at::Tensor FastConformerEncoder::feed_forward(const FeedForward& ff, const at::Tensor& x) const {
  const Backend& backend = *backend_;
  return ops::linear(backend, ops::activation(backend, ops::linear(backend, x, ff.w1, ff.b1), ops::Activation::Silu),
                     ff.w2, ff.b2);
}

at::Tensor FastConformerEncoder::attention(const Layer& layer, const at::Tensor& x, const at::Tensor& positions) const {
  const Backend& backend = *backend_;
  const int64_t length = x.size(0), d = config_.d_model, heads = config_.n_heads, dk = config_.head_dim();
  const at::Tensor qkv = ops::linear(backend, x, layer.qkv_weight, layer.qkv_bias);
  const at::Tensor q = qkv.narrow(1, 0, d).view({length, heads, dk});
  const at::Tensor k = qkv.narrow(1, d, d).view({length, heads, dk}).transpose(0, 1).unsqueeze(0);  // [1, h, L, dk]
  const at::Tensor v = qkv.narrow(1, 2 * d, d).view({length, heads, dk}).transpose(0, 1).unsqueeze(0);
  const at::Tensor p =
      ops::linear(backend, positions, layer.pos_weight, {}).view({2 * length - 1, heads, dk}).transpose(0, 1);
  const at::Tensor q_u = (q + layer.bias_u).transpose(0, 1).unsqueeze(0);  // [1, h, L, dk]
  const at::Tensor q_v = (q + layer.bias_v).transpose(0, 1);               // [h, L, dk]
  // The position term, an additive score bias: Transformer-XL's rel_shift moves row i of
  // [h, L, 2L - 1] left by L - 1 - i, so that column j holds relative position i - j (the padding
  // trick as NeMo writes it); scaled as the content term is.
  const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
  at::Tensor position = at::matmul(q_v, p.transpose(1, 2));  // [h, L, 2L - 1]
  ops::AttentionOptions options;
  options.scale = scale;
  options.bias = at::constant_pad_nd(position, {1, 0}, 0.0)
                     .view({heads, 2 * length, length})
                     .narrow(1, 1, 2 * length - 1)
                     .reshape({heads, length, 2 * length - 1})
                     .narrow(2, 0, length)
                     .mul(scale)
                     .unsqueeze(0);                                    // [1, h, L, L]
  const at::Tensor out = ops::attention(backend, q_u, k, v, options);  // [1, h, L, dk]
  return ops::linear(backend, out.squeeze(0).transpose(0, 1).reshape({length, d}), layer.out_weight, layer.out_bias);
}

at::Tensor FastConformerEncoder::convolution(const Layer& layer, const at::Tensor& x) const {
  const int64_t d = config_.d_model;
  // Pointwise conv as a matrix over [L, d], GLU over channels, then the channel-first depthwise conv.
  const Backend& backend = *backend_;
  const at::Tensor gated = at::glu(ops::linear(backend, x, layer.pointwise1_weight, layer.pointwise1_bias), 1);
  ops::Conv1dOptions depthwise;
  depthwise.padding = (config_.conv_kernel_size - 1) / 2;
  depthwise.groups = d;
  // The batch norm is folded into the depthwise conv (see the constructor).
  at::Tensor h = ops::conv1d(backend, gated.t().unsqueeze(0), layer.depthwise_weight, layer.depthwise_bias, depthwise);
  h = ops::activation(backend, h, ops::Activation::Silu).squeeze(0).t();
  return ops::linear(backend, h, layer.pointwise2_weight, layer.pointwise2_bias);
}

at::Tensor FastConformerEncoder::encode(const at::Tensor& mel) const {
  const FastConformerConfig& c = config_;
  if (mel.dim() != 2 || mel.size(0) != c.feat_in || mel.size(1) == 0) {
    fail(ErrorCode::InvalidArgument, "FastConformerEncoder: mel must be [{}, frames > 0], got [{}]", c.feat_in,
         fmt::join(mel.sizes(), ", "));
  }
  const at::Tensor& reference = conv0_weight_;
  at::Tensor x = subsample(mel.to(reference.device(), reference.scalar_type()));
  if (c.xscaling) x = x * std::sqrt(static_cast<double>(c.d_model));
  const at::Tensor positions = relative_positions(x.size(0), x.options());
  const auto norm = [&](const Norm& n, const at::Tensor& t) {
    return ops::layer_norm(*backend_, t, n.weight, n.bias, kLayerNormEps);
  };
  for (const Layer& layer : layers_) {
    x = x + feed_forward(layer.ff1, norm(layer.ff1_norm, x)) * 0.5;
    x = x + attention(layer, norm(layer.attention_norm, x), positions);
    x = x + convolution(layer, norm(layer.conv_norm, x));
    x = x + feed_forward(layer.ff2, norm(layer.ff2_norm, x)) * 0.5;
    x = norm(layer.out_norm, x);
  }
  return x;
}

}  // namespace izwi
