#include "layers/decoder_layer.h"

namespace izwi {

DecoderLayer::DecoderLayer(WeightSource& source, const std::string& prefix, const DecoderLayerSpec& spec)
    : input_norm_(
          RMSNorm::load(source, prefix + ".input_layernorm.weight", spec.attention.hidden_size, spec.rms_norm_eps)),
      attention_(source, prefix + ".self_attn", spec.attention),
      post_attention_norm_(RMSNorm::load(source, prefix + ".post_attention_layernorm.weight",
                                         spec.attention.hidden_size, spec.rms_norm_eps)),
      mlp_(source, prefix + ".mlp", spec.attention.hidden_size, spec.intermediate_size, spec.mlp_bias, spec.mlp_bias) {}

void DecoderLayer::operator()(at::Tensor& h, const RotaryEmbedding& rope, LayerCache& cache,
                              const ForwardContext& ctx) const {
  const at::Tensor attended = attention_(input_norm_(h, ctx), rope, cache, ctx);
  h.add_(mlp_(post_attention_norm_.add_and_norm(h, attended, ctx), ctx));
}

}  // namespace izwi
