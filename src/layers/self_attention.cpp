#include "layers/self_attention.h"

#include <cmath>

#include "kernels/ops/paged_attention_op.h"
#include "layers/rms_norm.h"

namespace izwi {

SelfAttention::SelfAttention(WeightSource& source, const std::string& prefix, const SelfAttentionSpec& spec)
    : spec_(spec) {
  const int64_t q_out = spec.num_heads * spec.head_dim, kv_out = spec.num_kv_heads * spec.head_dim;
  qkv_proj_ =
      Linear::load_stacked(source, {prefix + "." + spec.q_name, prefix + "." + spec.k_name, prefix + "." + spec.v_name},
                           {q_out, kv_out, kv_out}, spec.hidden_size, spec.qkv_bias);
  o_proj_ = Linear::load(source, prefix + "." + spec.o_name, spec.hidden_size, q_out, spec.output_bias);
  heads_.heads = spec.num_heads;
  heads_.kv_heads = spec.num_kv_heads;
  heads_.head_dim = spec.head_dim;
  if (spec.qk_norm_eps) {
    heads_.q_norm =
        RMSNorm::load(source, prefix + "." + spec.q_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps).weight;
    heads_.k_norm =
        RMSNorm::load(source, prefix + "." + spec.k_norm_name + ".weight", spec.head_dim, *spec.qk_norm_eps).weight;
    heads_.norm_eps = *spec.qk_norm_eps;
  }
}

at::Tensor SelfAttention::operator()(const at::Tensor& x, const RotaryEmbedding& rope, LayerCache& cache,
                                     const ForwardContext& ctx) const {
  const at::Tensor q = ops::attention_inputs(*ctx.backend, qkv_proj_(x, ctx), heads_, rope.angles(), ctx.positions,
                                             ctx.slot_mapping, cache.key, cache.value);
  const at::Tensor attended =
      ops::paged_attention(*ctx.backend, q, cache.key, cache.value, ctx.seqs, ctx.device_seqs, ctx.block_size,
                           1.0 / std::sqrt(static_cast<double>(spec_.head_dim)), spec_.sliding_window);
  return o_proj_(attended.reshape({x.size(0), spec_.num_heads * spec_.head_dim}), ctx);
}

LayerCacheSpec SelfAttention::cache_spec() const {
  LayerCacheSpec spec;
  spec.kind = LayerCacheSpec::Kind::Attention;
  spec.num_kv_heads = spec_.num_kv_heads;
  spec.head_dim = spec_.head_dim;
  return spec;
}

}  // namespace izwi
