#include "layers/self_attention.h"

#include <cmath>

#include "layers/paged_attention.h"

namespace izwi {

SelfAttention::SelfAttention(WeightLoader& loader, const std::string& prefix, const SelfAttentionSpec& spec)
    : spec_(spec) {
  const int64_t q_out = spec.num_heads * spec.head_dim, kv_out = spec.num_kv_heads * spec.head_dim;
  q_proj_ = Linear::load(loader, prefix + "." + spec.q_name, q_out, spec.hidden_size, spec.qkv_bias);
  k_proj_ = Linear::load(loader, prefix + "." + spec.k_name, kv_out, spec.hidden_size, spec.qkv_bias);
  v_proj_ = Linear::load(loader, prefix + "." + spec.v_name, kv_out, spec.hidden_size, spec.qkv_bias);
  o_proj_ = Linear::load(loader, prefix + "." + spec.o_name, spec.hidden_size, q_out, spec.output_bias);
  if (spec.qk_norm_eps) {
    q_norm_ = RMSNorm::load(loader, prefix + "." + spec.q_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps);
    k_norm_ = RMSNorm::load(loader, prefix + "." + spec.k_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps);
  }
}

at::Tensor SelfAttention::operator()(const at::Tensor& x, const RotaryEmbedding& rope, LayerCache& cache,
                                     const ForwardContext& ctx) const {
  const int64_t T = x.size(0);
  at::Tensor q = q_proj_(x).view({T, spec_.num_heads, spec_.head_dim});
  at::Tensor k = k_proj_(x).view({T, spec_.num_kv_heads, spec_.head_dim});
  at::Tensor v = v_proj_(x).view({T, spec_.num_kv_heads, spec_.head_dim});
  if (q_norm_) {
    q = (*q_norm_)(q);
    k = (*k_norm_)(k);
  }
  q = rope.apply(q, ctx.positions);
  k = rope.apply(k, ctx.positions);
  at::Tensor attn = paged_attention(q, k, v, cache, ctx, 1.0 / std::sqrt(static_cast<double>(spec_.head_dim)));
  return o_proj_(attn.reshape({T, spec_.num_heads * spec_.head_dim}));
}

LayerCacheSpec SelfAttention::cache_spec() const {
  LayerCacheSpec spec;
  spec.kind = LayerCacheSpec::Kind::Attention;
  spec.num_kv_heads = spec_.num_kv_heads;
  spec.head_dim = spec_.head_dim;
  return spec;
}

}  // namespace izwi
