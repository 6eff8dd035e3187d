#include "models/lfm2_audio/depthformer.h"

#include <fmt/format.h>

#include "common/check.h"
#include "io/weight_source.h"
#include "kernels/ops/attention_op.h"
#include "kernels/ops/linear_op.h"
#include "kernels/ops/rms_norm_op.h"
#include "kernels/ops/silu_mul_op.h"

namespace izwi {

Depthformer::Depthformer(WeightSource& weights, const DepthformerConfig& config)
    : config_(config), head_dim_(config.dim / config.heads) {
  const DepthformerConfig& c = config_;
  const int64_t d = c.dim, kv_dim = c.kv_heads * head_dim_;
  depth_linear_ = weights.take_matrix("depth_linear.weight", {c.codebooks * d, c.input_dim});
  depth_linear_bias_ = weights.take("depth_linear.bias", {c.codebooks * d});
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = fmt::format("depthformer.layers.{}.", i);
    Layer layer;
    layer.operator_norm = weights.take(p + "operator_norm.weight", {d});
    layer.qkv = weights.take_matrix(p + "operator.qkv_proj.weight", {d + 2 * kv_dim, d});
    layer.q_norm = weights.take(p + "operator.bounded_attention.q_layernorm.weight", {head_dim_});
    layer.k_norm = weights.take(p + "operator.bounded_attention.k_layernorm.weight", {head_dim_});
    layer.out = weights.take_matrix(p + "operator.out_proj.weight", {d, d});
    layer.ffn_norm = weights.take(p + "ffn_norm.weight", {d});
    // One product for both halves of the SwiGLU (ops::silu_mul takes [w1 | w3]).
    layer.w13 = at::cat({weights.take_matrix(p + "feed_forward.w1.weight", {c.ffn_dim, d}),
                         weights.take_matrix(p + "feed_forward.w3.weight", {c.ffn_dim, d})});
    layer.w2 = weights.take_matrix(p + "feed_forward.w2.weight", {d, c.ffn_dim});
    layers_.push_back(std::move(layer));
  }
  for (int64_t k = 0; k < c.codebooks; ++k) {
    const std::string p = fmt::format("depth_embeddings.{}.", k);
    Head head;
    head.embedding = weights.take_matrix(p + "embedding.weight", {c.vocab, d});
    head.norm = weights.take(p + "embedding_norm.weight", {d});
    if (c.tie) {
      if (weights.contains(p + "to_logits.weight")) weights.skip(p + "to_logits.weight");
      head.to_logits = head.embedding;
    } else {
      head.to_logits = weights.take_matrix(p + "to_logits.weight", {c.vocab, d});
    }
    heads_.push_back(std::move(head));
  }
  // As liquid-audio's precompute_freqs_cis: float32 angles position * theta^(-2i / head_dim).
  const at::Tensor freqs = 1.0 / at::pow(c.rope_theta, at::arange(0, head_dim_, 2, at::kLong).to(at::kFloat) /
                                                           static_cast<double>(head_dim_));
  const at::Tensor angles = at::arange(c.codebooks, at::kLong).to(at::kFloat).unsqueeze(1) * freqs.unsqueeze(0);
  cos_ = angles.cos().to(weights.device());
  sin_ = angles.sin().to(weights.device());
}

int64_t Depthformer::weight_bytes() const {
  int64_t total = depth_linear_.nbytes() + depth_linear_bias_.nbytes();
  for (const Layer& l : layers_) {
    for (const at::Tensor* t : {&l.operator_norm, &l.qkv, &l.q_norm, &l.k_norm, &l.out, &l.ffn_norm, &l.w13, &l.w2}) {
      total += static_cast<int64_t>(t->nbytes());
    }
  }
  for (const Head& h : heads_) {
    total += static_cast<int64_t>(h.norm.nbytes() + h.to_logits.nbytes());
    if (!config_.tie) total += static_cast<int64_t>(h.embedding.nbytes());
  }
  return total;
}

at::Tensor Depthformer::rope(const at::Tensor& x, int64_t step) const {
  const at::Tensor pairs = x.to(at::kFloat).unflatten(-1, {head_dim_ / 2, 2});
  const at::Tensor re = pairs.select(-1, 0), im = pairs.select(-1, 1);
  const at::Tensor cos = cos_[step], sin = sin_[step];
  return at::stack({re * cos - im * sin, re * sin + im * cos}, -1).flatten(-2).to(x.scalar_type());
}

at::Tensor Depthformer::step(at::Tensor x, int64_t step, std::vector<at::Tensor>& keys, std::vector<at::Tensor>& values,
                             const Backend& backend) const {
  const int64_t batch = x.size(0), d = config_.dim, kv_dim = config_.kv_heads * head_dim_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const double eps = config_.norm_eps;
    const at::Tensor qkv = ops::linear(backend, ops::rms_norm(backend, x, layer.operator_norm, eps), layer.qkv, {});
    at::Tensor q = qkv.narrow(1, 0, d).view({batch, config_.heads, head_dim_});
    at::Tensor k = qkv.narrow(1, d, kv_dim).view({batch, config_.kv_heads, head_dim_});
    const at::Tensor v = qkv.narrow(1, d + kv_dim, kv_dim).reshape({batch, config_.kv_heads, 1, head_dim_});
    q = rope(ops::rms_norm(backend, q, layer.q_norm, eps), step).unsqueeze(2);  // [B, heads, 1, head_dim]
    k = rope(ops::rms_norm(backend, k, layer.k_norm, eps), step).unsqueeze(2);
    keys[l] = keys[l].defined() ? at::cat({keys[l], k}, 2) : k;  // [B, kv_heads, step + 1, head_dim]
    values[l] = values[l].defined() ? at::cat({values[l], v}, 2) : v;
    // One query per row that sees every earlier step of its frame.
    const at::Tensor attn = ops::attention(backend, q, keys[l], values[l]);
    x = x + ops::linear(backend, attn.reshape({batch, d}), layer.out, {});
    const at::Tensor gate_up = ops::linear(backend, ops::rms_norm(backend, x, layer.ffn_norm, eps), layer.w13, {});
    x = x + ops::linear(backend, ops::silu_mul(backend, gate_up, config_.ffn_dim), layer.w2, {});
  }
  return x;
}

std::vector<std::vector<int32_t>> Depthformer::frames(const at::Tensor& hidden,
                                                      const std::vector<SamplingState*>& sampling, Sampler& sampler,
                                                      const Backend& backend) const {
  const int64_t batch = hidden.size(0), d = config_.dim;
  IZWI_CHECK(static_cast<int64_t>(sampling.size()) == batch, "{} sampling states for {} rows", sampling.size(), batch);
  const at::Tensor inputs =
      ops::linear(backend, hidden, depth_linear_, depth_linear_bias_).view({batch, config_.codebooks, d});
  std::vector<at::Tensor> keys(layers_.size()), values(layers_.size());
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(batch));
  at::Tensor previous = at::zeros({batch, d}, inputs.options());
  for (int64_t k = 0; k < config_.codebooks; ++k) {
    const at::Tensor x = step(inputs.select(1, k) + previous, k, keys, values, backend);
    const Head& head = heads_[static_cast<size_t>(k)];
    const std::vector<int32_t> sampled = sampler.sample_rows(
        ops::linear(backend, ops::rms_norm(backend, x, head.norm, config_.norm_eps), head.to_logits, {}), sampling,
        backend);
    std::vector<int64_t> codes(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      out[static_cast<size_t>(b)].push_back(sampled[static_cast<size_t>(b)]);
      codes[static_cast<size_t>(b)] = sampled[static_cast<size_t>(b)];
    }
    previous = at::embedding(head.embedding, at::tensor(codes, at::kLong).to(inputs.device())).to(inputs.scalar_type());
  }
  return out;
}

}  // namespace izwi
