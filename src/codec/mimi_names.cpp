#include "codec/mimi_names.h"

#include <utility>

namespace izwi {

std::string moshi_to_transformers_mimi_name(const std::string& name) {
  // In this order, every occurrence replaced (longer patterns before their prefixes).
  static const std::pair<const char*, const char*> kReplacements[] = {
      {"conv.conv.conv", "conv"},
      {"convtr.convtr.convtr", "conv"},
      {"conv.conv", "conv"},
      {"convtr.convtr", "conv"},
      {"quantizer.rvq_first.vq", "quantizer.semantic_residual_vector_quantizer"},
      {"quantizer.rvq_first", "quantizer.semantic_residual_vector_quantizer"},
      {"quantizer.rvq_rest.vq", "quantizer.acoustic_residual_vector_quantizer"},
      {"quantizer.rvq_rest", "quantizer.acoustic_residual_vector_quantizer"},
      {"_codebook", "codebook"},
      {"_initialized", "initialized"},
      {"embedding_sum", "embed_sum"},
      {"encoder.model", "encoder.layers"},
      {"decoder.model", "decoder.layers"},
      {"encoder_transformer.transformer", "encoder_transformer"},
      {"decoder_transformer.transformer", "decoder_transformer"},
      {"linear1", "mlp.fc1"},
      {"linear2", "mlp.fc2"},
      {"self_attn.out_proj", "self_attn.o_proj"},
      {"norm1", "input_layernorm"},
      {"norm2", "post_attention_layernorm"},
      {"layer_scale_1", "self_attn_layer_scale"},
      {"layer_scale_2", "mlp_layer_scale"},
  };
  std::string out = name;
  for (const auto& [from, to] : kReplacements) {
    const std::string pattern(from), replacement(to);
    for (size_t at = out.find(pattern); at != std::string::npos; at = out.find(pattern, at + replacement.size())) {
      out.replace(at, pattern.size(), replacement);
    }
  }
  return out;
}

}  // namespace izwi
