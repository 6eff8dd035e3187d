#pragma once
// The LFM2 decoder stack, shared by the text model (Lfm2ForCausalLM, tensors under "model.") and
// LFM2-Audio (under "lfm."): token embedding, layers that are either gated short convolutions or
// grouped-query attention with q/k layernorms, each followed by a SwiGLU feed-forward, and the
// final norm (named embedding_norm).

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "io/weight_source.h"
#include "layers/embedding.h"
#include "layers/gated_mlp.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/self_attention.h"
#include "layers/short_conv.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct Lfm2Config {
  int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_layers = 0;
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0, max_positions = 0;
  int64_t conv_kernel = 3;
  bool conv_bias = false;
  double norm_eps = 1e-5;
  RopeConfig rope;
  bool tie_word_embeddings = true;
  std::vector<bool> is_attention;  ///< Per layer: attention (true) or short conv (false).

  /// Reads transformers' Lfm2Config fields; errors name `f.origin()` and the field.
  static Lfm2Config parse(const JsonFields& f);
};

class Lfm2Backbone {
 public:
  Lfm2Backbone(WeightSource& source, const std::string& prefix, const Lfm2Config& config);

  const Lfm2Config& config() const { return config_; }
  const Embedding& embed_tokens() const { return embed_tokens_; }
  Embedding& embed_tokens() { return embed_tokens_; }
  std::vector<LayerCacheSpec> cache_layout() const;
  /// Input embeddings [T, hidden] of the batch -> final-norm hidden states [T, hidden].
  at::Tensor forward(at::Tensor h, const ForwardContext& ctx, CacheBuffers& cache) const;
  /// Weight bytes one decode step reads in the layers (not the embedding).
  int64_t layer_weight_bytes() const;

 private:
  struct Layer {
    RMSNorm operator_norm;
    std::unique_ptr<SelfAttention> attention;  ///< Set on attention layers.
    std::unique_ptr<ShortConv> conv;           ///< Set on conv layers.
    RMSNorm ffn_norm;
    GatedMlp feed_forward;
  };

  Lfm2Config config_;
  Embedding embed_tokens_;
  std::vector<Layer> layers_;
  RMSNorm final_norm_;
  std::unique_ptr<RotaryEmbedding> rope_;
};

}  // namespace izwi
