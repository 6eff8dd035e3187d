#include "codec/windowed_transformer.h"

#include <fmt/format.h>

#include "io/weight_source.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/attention_op.h"
#include "kernels/ops/layer_norm_op.h"
#include "kernels/ops/linear_op.h"
#include "kernels/ops/rms_norm_op.h"
#include "kernels/ops/rope_op.h"
#include "kernels/ops/silu_mul_op.h"

namespace izwi {

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
    : config_(config), backend_(&weights.backend()) {
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
      // One product for both halves of the SwiGLU (ops::silu_mul takes [gate | up]).
      layer.gate_up = at::cat({weights.take_matrix(p + "mlp.gate_proj.weight", {ffn, h}),
                               weights.take_matrix(p + "mlp.up_proj.weight", {ffn, h})});
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
          &l.k_bias, &l.v_bias, &l.o_bias, &l.attn_scale, &l.gate_up, &l.up, &l.down, &l.mlp_scale}) {
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
  if (bias.defined()) return ops::layer_norm(*backend_, x, weight, bias, config_.norm_eps);
  return ops::rms_norm(*backend_, x, weight, config_.norm_eps);
}

at::Tensor WindowedTransformer::mlp(const Layer& layer, const at::Tensor& x) const {
  if (!layer.gate_up.defined()) {
    return ops::linear(*backend_,
                       ops::activation(*backend_, ops::linear(*backend_, x, layer.up, {}), ops::Activation::Gelu),
                       layer.down, {});
  }
  const int64_t ffn = config_.intermediate_size;
  const at::Tensor gate_up = ops::linear(*backend_, x, layer.gate_up, {});
  std::vector<int64_t> shape = gate_up.sizes().vec();
  shape.back() = ffn;
  return ops::linear(*backend_, ops::silu_mul(*backend_, gate_up.reshape({-1, 2 * ffn}), ffn).view(shape), layer.down,
                     {});
}

at::Tensor WindowedTransformer::forward(const at::Tensor& x, const std::vector<int64_t>& positions,
                                        at::Tensor* states) const {
  const Backend& backend = *backend_;
  const int64_t batch = x.size(0), n = x.size(1), cached = config_.sliding_window - 1, keys = cached + n;
  const int64_t heads = config_.num_heads, kv_heads = config_.num_kv_heads, hd = config_.head_dim;
  const at::TensorOptions long_opts = at::TensorOptions().dtype(at::kLong).device(x.device());

  // Absolute positions: queries p_b + i, keys p_b - cached + c (c over cache then new frames).
  const at::Tensor start = at::tensor(positions, at::TensorOptions().dtype(at::kLong)).to(x.device());
  const at::Tensor query_pos = (start.view({-1, 1}) + at::arange(n, long_opts).view({1, -1})).reshape({-1});  // [B * n]
  // Query i sees key c iff 0 <= (cached + i) - c < window, and keys before the stream's start
  // (zero-filled cache, key position < 0) are hidden.
  ops::AttentionOptions attention = ops::AttentionOptions::causal(config_.sliding_window);
  attention.first_key = (cached - start).clamp_min(0);
  const ops::RopeAngles angles{{}, {}, inv_freq_, x.scalar_type()};

  at::Tensor hidden = input_proj_.defined() ? ops::linear(backend, x, input_proj_, input_proj_bias_) : x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    at::Tensor& k_cache = states[2 * l];
    at::Tensor& v_cache = states[2 * l + 1];
    const at::Tensor h = norm(hidden, layer.input_norm, layer.input_norm_bias);
    // Rotated as [B * n, heads, hd] rows, then [B, heads, n, hd].
    const at::Tensor q = ops::rope(backend, ops::linear(backend, h, layer.q, layer.q_bias).view({batch * n, heads, hd}),
                                   query_pos, angles)
                             .view({batch, n, heads, hd})
                             .transpose(1, 2);
    const at::Tensor k =
        ops::rope(backend, ops::linear(backend, h, layer.k, layer.k_bias).view({batch * n, kv_heads, hd}), query_pos,
                  angles)
            .view({batch, n, kv_heads, hd})
            .transpose(1, 2);
    const at::Tensor v = ops::linear(backend, h, layer.v, layer.v_bias).view({batch, n, kv_heads, hd}).transpose(1, 2);
    const at::Tensor k_all = at::cat({k_cache, k}, 2);  // [B, kv_heads, keys, hd]
    const at::Tensor v_all = at::cat({v_cache, v}, 2);
    k_cache = k_all.narrow(2, keys - cached, cached).contiguous();
    v_cache = v_all.narrow(2, keys - cached, cached).contiguous();
    const at::Tensor attn =
        ops::attention(backend, q, k_all, v_all, attention).transpose(1, 2).reshape({batch, n, heads * hd});
    hidden = hidden + ops::linear(backend, attn, layer.o, layer.o_bias) * layer.attn_scale;
    hidden = hidden + mlp(layer, norm(hidden, layer.post_norm, layer.post_norm_bias)) * layer.mlp_scale;
  }
  if (!output_proj_.defined()) return hidden;
  return ops::linear(backend, norm(hidden, norm_, {}), output_proj_, output_proj_bias_);
}

}  // namespace izwi
