#pragma once
// LFM2: a hybrid decoder whose layers are either gated short convolutions or grouped-query
// attention with q/k layernorms, each followed by a SwiGLU feed-forward.

#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/embedding.h"
#include "layers/gated_mlp.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/self_attention.h"
#include "layers/short_conv.h"
#include "models/causal_lm.h"

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

  static Lfm2Config parse(const HfConfig& config);
};

class Lfm2ForCausalLM final : public CausalLM {
 public:
  Lfm2ForCausalLM(const HfConfig& config, WeightSource& source);

  const ModelSpec& spec() const override { return spec_; }
  std::vector<LayerCacheSpec> cache_layout() const override;
  at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const override;
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const override;

 private:
  struct Layer {
    RMSNorm operator_norm;
    std::unique_ptr<SelfAttention> attention;  ///< Set on attention layers.
    std::unique_ptr<ShortConv> conv;           ///< Set on conv layers.
    RMSNorm ffn_norm;
    GatedMlp feed_forward;
  };

  Lfm2Config config_;
  ModelSpec spec_;
  Embedding embed_tokens_;
  std::vector<Layer> layers_;
  RMSNorm final_norm_;
  Linear lm_head_;
  std::unique_ptr<RotaryEmbedding> rope_;
};

}  // namespace izwi
