#pragma once
// Llama-family decoder (Llama 2/3, Qwen3): RMSNorm, rotary attention with grouped KV heads,
// SwiGLU MLP. Qwen3 adds per-head q/k RMSNorm and an explicit head_dim.

#include <memory>
#include <optional>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/decoder_layer.h"
#include "layers/embedding.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "models/text_lm.h"

namespace izwi {

struct LlamaConfig {
  int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_layers = 0;
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0, max_positions = 0;
  double rms_norm_eps = 1e-6;
  RopeConfig rope;
  bool tie_word_embeddings = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;

  /// Reads and validates config.json; `qk_norm` selects the Qwen3 variant.
  static LlamaConfig parse(const HfConfig& config, bool qk_norm);
  /// Same from any object with these fields (e.g. the Qwen3-TTS talker_config).
  static LlamaConfig parse(const JsonFields& fields, bool qk_norm);
  /// The layer shape this config describes.
  DecoderLayerSpec layer_spec() const;
};

class LlamaForCausalLM final : public TextLM {
 public:
  LlamaForCausalLM(const HfConfig& config, WeightSource& source, bool qk_norm);

  std::vector<LayerCacheSpec> cache_layout() const override;
  at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const override;

 private:
  LlamaForCausalLM(const HfConfig& hf, WeightSource& source, const LlamaConfig& config);

  LlamaConfig config_;
  Embedding embed_tokens_;
  std::vector<DecoderLayer> layers_;
  RMSNorm norm_;
  std::unique_ptr<RotaryEmbedding> rope_;
};

}  // namespace izwi
