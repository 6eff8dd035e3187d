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
  depth_linear_ = Linear::load(weights, "depth_linear", c.codebooks * d, c.input_dim, true);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = fmt::format("depthformer.layers.{}.", i);
    Layer layer;
    layer.operator_norm = weights.take(p + "operator_norm.weight", {d});
    layer.qkv = Linear::load(weights, p + "operator.qkv_proj", d + 2 * kv_dim, d, false);
    layer.q_norm = weights.take(p + "operator.bounded_attention.q_layernorm.weight", {head_dim_});
    layer.k_norm = weights.take(p + "operator.bounded_attention.k_layernorm.weight", {head_dim_});
    layer.out = Linear::load(weights, p + "operator.out_proj", d, d, false);
    layer.ffn_norm = weights.take(p + "ffn_norm.weight", {d});
    // One product for both halves of the SwiGLU (ops::silu_mul takes [w1 | w3]).
    layer.w13 =
        Linear::load_stacked(weights, {p + "feed_forward.w1", p + "feed_forward.w3"}, {c.ffn_dim, c.ffn_dim}, d, false);
    layer.w2 = Linear::load(weights, p + "feed_forward.w2", d, c.ffn_dim, false);
    layers_.push_back(std::move(layer));
  }
  for (int64_t k = 0; k < c.codebooks; ++k) {
    const std::string p = fmt::format("depth_embeddings.{}.", k);
    Head head;
    head.embedding = Embedding(weights, p + "embedding.weight", c.vocab, d);
    head.norm = weights.take(p + "embedding_norm.weight", {d});
    head.to_logits = load_output_head(weights, head.embedding, c.tie, p + "to_logits", c.vocab, d);
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
  int64_t total = depth_linear_.weight_bytes();
  for (const Layer& l : layers_) {
    for (const at::Tensor* t : {&l.operator_norm, &l.q_norm, &l.k_norm, &l.ffn_norm}) {
      total += static_cast<int64_t>(t->nbytes());
    }
    total += l.qkv.weight_bytes() + l.out.weight_bytes() + l.w13.weight_bytes() + l.w2.weight_bytes();
  }
  for (const Head& h : heads_) {
    // An untied embedding table gives one row per step: not counted, as ModelSpec says.
    total += static_cast<int64_t>(h.norm.nbytes()) + h.to_logits.weight_bytes();
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
    const at::Tensor qkv = layer.qkv(ops::rms_norm(backend, x, layer.operator_norm, eps), backend);
    at::Tensor q = qkv.narrow(1, 0, d).view({batch, config_.heads, head_dim_});
    at::Tensor k = qkv.narrow(1, d, kv_dim).view({batch, config_.kv_heads, head_dim_});
    const at::Tensor v = qkv.narrow(1, d + kv_dim, kv_dim).reshape({batch, config_.kv_heads, 1, head_dim_});
    q = rope(ops::rms_norm(backend, q, layer.q_norm, eps), step).unsqueeze(2);  // [B, heads, 1, head_dim]
    k = rope(ops::rms_norm(backend, k, layer.k_norm, eps), step).unsqueeze(2);
    keys[l] = keys[l].defined() ? at::cat({keys[l], k}, 2) : k;  // [B, kv_heads, step + 1, head_dim]
    values[l] = values[l].defined() ? at::cat({values[l], v}, 2) : v;
    // One query per row that sees every earlier step of its frame.
    const at::Tensor attn = ops::attention(backend, q, keys[l], values[l]);
    x = x + layer.out(attn.reshape({batch, d}), backend);
    const at::Tensor gate_up = layer.w13(ops::rms_norm(backend, x, layer.ffn_norm, eps), backend);
    x = x + layer.w2(ops::silu_mul(backend, gate_up, config_.ffn_dim), backend);
  }
  return x;
}

at::Tensor Depthformer::chain(const at::Tensor& hidden, const Backend& backend, const ChainSample& sample) const {
  const int64_t batch = hidden.size(0), d = config_.dim;
  const at::Tensor inputs = depth_linear_(hidden, backend).view({batch, config_.codebooks, d});
  std::vector<at::Tensor> keys(layers_.size()), values(layers_.size());
  // Each codebook's ids stay where they were drawn and give the next step's input there; the
  // frame comes back to the host in one copy at its end, not one per codebook.
  std::vector<at::Tensor> sampled;
  at::Tensor previous = at::zeros({batch, d}, inputs.options());
  for (int64_t k = 0; k < config_.codebooks; ++k) {
    const at::Tensor x = step(inputs.select(1, k) + previous, k, keys, values, backend);
    const Head& head = heads_[static_cast<size_t>(k)];
    sampled.push_back(sample(static_cast<int32_t>(k),
                             head.to_logits(ops::rms_norm(backend, x, head.norm, config_.norm_eps), backend)));
    if (k + 1 < config_.codebooks) {
      previous = head.embedding(sampled.back().to(inputs.device()), inputs.scalar_type());
    }
  }
  return at::stack(sampled, 1);  // [batch, codebooks]
}

std::vector<std::vector<int32_t>> Depthformer::frames(const at::Tensor& hidden,
                                                      const std::vector<SamplingState*>& sampling, Sampler& sampler,
                                                      const Backend& backend) const {
  IZWI_CHECK(static_cast<int64_t>(sampling.size()) == hidden.size(0), "{} sampling states for {} rows", sampling.size(),
             hidden.size(0));
  // The chain's K/V are the step's own tensors (grown by concatenation), so a bucket's graph needs
  // nothing beyond its input buffer.
  const auto make_chain = [this, &backend](int32_t) -> FrameChain {
    return [this, &backend](const at::Tensor& in, const ChainSample& sample) { return chain(in, backend, sample); };
  };
  const auto eager = [&] {
    return chain(hidden, backend, [&](int32_t, const at::Tensor& logits) {
      return sampler.sample_rows_on_device(logits, sampling, backend);
    });
  };
  return frame_codes(frame_chain_ids(
      graphs_,
      FrameChainSettings{&backend, static_cast<int32_t>(config_.codebooks), config_.vocab, backend.max_graph_batch()},
      hidden, sampling, make_chain, eager));
}

}  // namespace izwi
