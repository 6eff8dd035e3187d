#pragma once
// Pre-norm decoder layer of the Llama family (Llama, Qwen3, and the Qwen3-TTS talker and code
// predictor): h += attention(norm(h)); h += SwiGLU(norm(h)).

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/gated_mlp.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/self_attention.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct DecoderLayerSpec {
  SelfAttentionSpec attention;
  int64_t intermediate_size = 0;
  double rms_norm_eps = 1e-6;
  bool mlp_bias = false;
};

class DecoderLayer {
 public:
  /// Loads `<prefix>.input_layernorm`, `.self_attn`, `.post_attention_layernorm` and `.mlp`.
  DecoderLayer(WeightSource& source, const std::string& prefix, const DecoderLayerSpec& spec);

  /// Updates h [T, hidden] in place.
  void operator()(at::Tensor& h, const RotaryEmbedding& rope, LayerCache& cache, const ForwardContext& ctx) const;

  LayerCacheSpec cache_spec() const { return attention_.cache_spec(); }
  int64_t weight_bytes() const { return attention_.weight_bytes() + mlp_.weight_bytes(); }

 private:
  RMSNorm input_norm_;
  SelfAttention attention_;
  RMSNorm post_attention_norm_;
  GatedMlp mlp_;
};

}  // namespace izwi
