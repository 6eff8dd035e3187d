#include "layers/self_attention.h"

#include <cmath>

#include "layers/paged_attention.h"

namespace izwi {

SelfAttention::SelfAttention(WeightSource& source, const std::string& prefix, const SelfAttentionSpec& spec)
    : spec_(spec) {
  const int64_t q_out = spec.num_heads * spec.head_dim, kv_out = spec.num_kv_heads * spec.head_dim;
  qkv_proj_ =
      Linear::load_stacked(source, {prefix + "." + spec.q_name, prefix + "." + spec.k_name, prefix + "." + spec.v_name},
                           {q_out, kv_out, kv_out}, spec.hidden_size, spec.qkv_bias);
  o_proj_ = Linear::load(source, prefix + "." + spec.o_name, spec.hidden_size, q_out, spec.output_bias);
  if (spec.qk_norm_eps) {
    q_norm_ = RMSNorm::load(source, prefix + "." + spec.q_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps);
    k_norm_ = RMSNorm::load(source, prefix + "." + spec.k_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps);
  }
}

at::Tensor SelfAttention::operator()(const at::Tensor& x, const RotaryEmbedding& rope, LayerCache& cache,
                                     const ForwardContext& ctx) const {
  const int64_t T = x.size(0), q_out = spec_.num_heads * spec_.head_dim, kv_out = spec_.num_kv_heads * spec_.head_dim;
  const at::Tensor qkv = qkv_proj_(x, ctx);
  at::Tensor q = qkv.narrow(1, 0, q_out).view({T, spec_.num_heads, spec_.head_dim});
  at::Tensor k = qkv.narrow(1, q_out, kv_out).view({T, spec_.num_kv_heads, spec_.head_dim});
  at::Tensor v = qkv.narrow(1, q_out + kv_out, kv_out).view({T, spec_.num_kv_heads, spec_.head_dim});
  if (q_norm_) {
    q = (*q_norm_)(q, ctx);
    k = (*k_norm_)(k, ctx);
  }
  q = rope.apply(q, ctx);
  k = rope.apply(k, ctx);
  at::Tensor attn =
      paged_attention(q, k, v, cache, ctx, 1.0 / std::sqrt(static_cast<double>(spec_.head_dim)), spec_.sliding_window);
  return o_proj_(attn.reshape({T, q_out}), ctx);
}

LayerCacheSpec SelfAttention::cache_spec() const {
  LayerCacheSpec spec;
  spec.kind = LayerCacheSpec::Kind::Attention;
  spec.num_kv_heads = spec_.num_kv_heads;
  spec.head_dim = spec_.head_dim;
  return spec;
}

}  // namespace izwi
