#include "codec/windowed_transformer.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "io/weight_source.h"
#include "kernels/ops/linear_op.h"

namespace izwi {
namespace {

at::Tensor rotate_half(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

void WindowedTransformer::take_qkv(WeightSource& weights, const std::string& p, Layer& layer) const {
  const int64_t h = config_.hidden_size, hd = config_.head_dim, q_dim = config_.num_heads * hd,
                kv_dim = config_.num_kv_heads * hd;
  if (!weights.contains(p + "self_attn.in_proj_weight")) {
    layer.q = weights.take_matrix(p + "self_attn.q_proj.weight", {q_dim, h});
    layer.k = weights.take_matrix(p + "self_attn.k_proj.weight", {kv_dim, h});
    layer.v = weights.take_matrix(p + "self_attn.v_proj.weight", {kv_dim, h});
    return;
  }
  // moshi rotates interleaved pairs (0,1), (2,3), ...; reorder each head's q/k rows so the
  // half-split rotation used here computes the same thing (transformers' conversion does this).
  const at::Tensor packed = weights.take_matrix(p + "self_attn.in_proj_weight", {q_dim + 2 * kv_dim, h});
  const auto half_split = [&](const at::Tensor& w, int64_t heads) {
    return w.view({heads, hd / 2, 2, h}).transpose(1, 2).reshape({heads * hd, h}).contiguous();
  };
  layer.q = half_split(packed.narrow(0, 0, q_dim), config_.num_heads);
  layer.k = half_split(packed.narrow(0, q_dim, kv_dim), config_.num_kv_heads);
  layer.v = packed.narrow(0, q_dim + kv_dim, kv_dim).contiguous();
}

WindowedTransformer::WindowedTransformer(WeightSource& weights, const std::string& prefix,
                                         const WindowedTransformerConfig& config)
    : config_(config) {
  const bool mimi = config.style == WindowedTransformerConfig::Style::kMimi;
  const int64_t h = config.hidden_size, q_dim = config.num_heads * config.head_dim, ffn = config.intermediate_size;
  if (!mimi) {
    input_proj_ = weights.take_matrix(prefix + ".input_proj.weight", {h, config.input_dim});
    input_proj_bias_ = weights.take(prefix + ".input_proj.bias", {h});
    output_proj_ = weights.take_matrix(prefix + ".output_proj.weight", {config.input_dim, h});
    output_proj_bias_ = weights.take(prefix + ".output_proj.bias", {config.input_dim});
    norm_ = weights.take(prefix + ".norm.weight", {h});
  }
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const std::string p = fmt::format("{}.layers.{}.", prefix, i);
    Layer layer;
    layer.input_norm = weights.take(p + "input_layernorm.weight", {h});
    layer.post_norm = weights.take(p + "post_attention_layernorm.weight", {h});
    if (mimi) {
      layer.input_norm_bias = weights.take(p + "input_layernorm.bias", {h});
      layer.post_norm_bias = weights.take(p + "post_attention_layernorm.bias", {h});
    }
    take_qkv(weights, p, layer);
    layer.o = weights.take_matrix(p + "self_attn.o_proj.weight", {h, q_dim});
    if (config.attention_bias) {
      const int64_t kv_dim = config.num_kv_heads * config.head_dim;
      layer.q_bias = weights.take(p + "self_attn.q_proj.bias", {q_dim});
      layer.k_bias = weights.take(p + "self_attn.k_proj.bias", {kv_dim});
      layer.v_bias = weights.take(p + "self_attn.v_proj.bias", {kv_dim});
      layer.o_bias = weights.take(p + "self_attn.o_proj.bias", {h});
    }
    layer.attn_scale = weights.take(p + "self_attn_layer_scale.scale", {h});
    if (mimi) {
      layer.up = weights.take_matrix(p + "mlp.fc1.weight", {ffn, h});
      layer.down = weights.take_matrix(p + "mlp.fc2.weight", {h, ffn});
    } else {
      layer.gate = weights.take_matrix(p + "mlp.gate_proj.weight", {ffn, h});
      layer.up = weights.take_matrix(p + "mlp.up_proj.weight", {ffn, h});
      layer.down = weights.take_matrix(p + "mlp.down_proj.weight", {h, ffn});
    }
    layer.mlp_scale = weights.take(p + "mlp_layer_scale.scale", {h});
    layers_.push_back(std::move(layer));
  }
  // As transformers' default rope: 1 / theta^(arange(0, d, 2) / d), computed in float32.
  inv_freq_ = 1.0 / at::pow(config.rope_theta, at::arange(0, config.head_dim, 2, at::kLong).to(at::kFloat) /
                                                   static_cast<double>(config.head_dim));
  inv_freq_ = inv_freq_.to(weights.device());
}

int64_t WindowedTransformer::weight_bytes() const {
  const auto bytes = [](const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; };
  int64_t total =
      bytes(input_proj_) + bytes(input_proj_bias_) + bytes(output_proj_) + bytes(output_proj_bias_) + bytes(norm_);
  for (const Layer& l : layers_) {
    for (const at::Tensor* t :
         {&l.input_norm, &l.input_norm_bias, &l.post_norm, &l.post_norm_bias, &l.q, &l.k, &l.v, &l.o, &l.q_bias,
          &l.k_bias, &l.v_bias, &l.o_bias, &l.attn_scale, &l.gate, &l.up, &l.down, &l.mlp_scale}) {
      total += bytes(*t);
    }
  }
  return total;
}

void WindowedTransformer::append_initial_state(std::vector<at::Tensor>& states, int64_t batch,
                                               const at::TensorOptions& options) const {
  for (int64_t i = 0; i < 2 * config_.num_layers; ++i) {
    states.push_back(at::zeros({batch, config_.num_kv_heads, config_.sliding_window - 1, config_.head_dim}, options));
  }
}

at::Tensor WindowedTransformer::norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) const {
  if (bias.defined()) return at::layer_norm(x, {x.size(-1)}, weight, bias, config_.norm_eps);
  const at::Tensor xf = x.to(at::kFloat);
  return weight * (xf * at::rsqrt(xf.pow(2).mean(-1, true) + config_.norm_eps)).to(x.scalar_type());
}

at::Tensor WindowedTransformer::mlp(const Layer& layer, const at::Tensor& x) const {
  if (!layer.gate.defined())
    return ops::linear(Backend::host(), at::gelu(ops::linear(Backend::host(), x, layer.up, {})), layer.down, {});
  return ops::linear(
      Backend::host(),
      at::silu(ops::linear(Backend::host(), x, layer.gate, {})) * ops::linear(Backend::host(), x, layer.up, {}),
      layer.down, {});
}

at::Tensor WindowedTransformer::forward(const at::Tensor& x, const std::vector<int64_t>& positions,
                                        at::Tensor* states) const {
  const int64_t batch = x.size(0), n = x.size(1), cached = config_.sliding_window - 1, keys = cached + n;
  const int64_t heads = config_.num_heads, kv_heads = config_.num_kv_heads, hd = config_.head_dim;
  const at::TensorOptions long_opts = at::TensorOptions().dtype(at::kLong).device(x.device());

  // Absolute positions: queries p_b + i, keys p_b - cached + c (c over cache then new frames).
  const at::Tensor start = at::tensor(positions, at::TensorOptions().dtype(at::kLong)).to(x.device()).view({-1, 1});
  const at::Tensor query_pos = start + at::arange(n, long_opts).view({1, -1});            // [B, n]
  const at::Tensor key_pos = start - cached + at::arange(keys, long_opts).view({1, -1});  // [B, keys]
  const at::Tensor distance = query_pos.unsqueeze(2) - key_pos.unsqueeze(1);              // [B, n, keys]
  const at::Tensor allowed = (distance >= 0) & (distance < config_.sliding_window) & (key_pos >= 0).unsqueeze(1);
  const at::Tensor mask =
      at::zeros({batch, 1, n, keys}, x.options().dtype(at::kFloat))
          .masked_fill_(allowed.logical_not().unsqueeze(1), -std::numeric_limits<float>::infinity());

  // RoPE tables in float32, as the reference computes them: [B, 1, n, hd].
  const at::Tensor freqs = query_pos.to(at::kFloat).unsqueeze(2) * inv_freq_.view({1, 1, -1});
  const at::Tensor emb = at::cat({freqs, freqs}, -1).unsqueeze(1);
  const at::Tensor cos = emb.cos().to(x.scalar_type()), sin = emb.sin().to(x.scalar_type());
  const double scaling = 1.0 / std::sqrt(static_cast<double>(hd));

  at::Tensor hidden = input_proj_.defined() ? ops::linear(Backend::host(), x, input_proj_, input_proj_bias_) : x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    at::Tensor& k_cache = states[2 * l];
    at::Tensor& v_cache = states[2 * l + 1];
    const at::Tensor h = norm(hidden, layer.input_norm, layer.input_norm_bias);
    at::Tensor q = ops::linear(Backend::host(), h, layer.q, layer.q_bias).view({batch, n, heads, hd}).transpose(1, 2);
    at::Tensor k =
        ops::linear(Backend::host(), h, layer.k, layer.k_bias).view({batch, n, kv_heads, hd}).transpose(1, 2);
    const at::Tensor v =
        ops::linear(Backend::host(), h, layer.v, layer.v_bias).view({batch, n, kv_heads, hd}).transpose(1, 2);
    q = q * cos + rotate_half(q) * sin;
    k = k * cos + rotate_half(k) * sin;
    at::Tensor k_all = at::cat({k_cache, k}, 2);  // [B, kv_heads, keys, hd]
    at::Tensor v_all = at::cat({v_cache, v}, 2);
    k_cache = k_all.narrow(2, keys - cached, cached).contiguous();
    v_cache = v_all.narrow(2, keys - cached, cached).contiguous();
    if (heads != kv_heads) {
      k_all = k_all.repeat_interleave(heads / kv_heads, 1);
      v_all = v_all.repeat_interleave(heads / kv_heads, 1);
    }
    const at::Tensor scores = at::matmul(q, k_all.transpose(2, 3)) * scaling + mask;
    const at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(x.scalar_type());
    const at::Tensor attn = at::matmul(probs, v_all).transpose(1, 2).reshape({batch, n, heads * hd});
    hidden = hidden + ops::linear(Backend::host(), attn, layer.o, layer.o_bias) * layer.attn_scale;
    hidden = hidden + mlp(layer, norm(hidden, layer.post_norm, layer.post_norm_bias)) * layer.mlp_scale;
  }
  if (!output_proj_.defined()) return hidden;
  return ops::linear(Backend::host(), norm(hidden, norm_, {}), output_proj_, output_proj_bias_);
}

}  // namespace izwi
