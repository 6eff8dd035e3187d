#include "models/llama.h"

#include <fmt/format.h>

#include "common/check.h"
#include "io/config_fields.h"

namespace izwi {

LlamaConfig LlamaConfig::parse(const HfConfig& hf, bool qk_norm) { return parse(hf.fields(), qk_norm); }

namespace {

// num_key_value_heads and head_dim default to values derived from the others (set after reading).
constexpr ConfigField<LlamaConfig> kLlamaFields[] = {
    {"vocab_size", &LlamaConfig::vocab_size, 1, kMaxVocabSize, kRequired},
    {"hidden_size", &LlamaConfig::hidden_size, 1, kMaxHiddenSize, kRequired},
    {"intermediate_size", &LlamaConfig::intermediate_size, 1, kMaxIntermediateSize, kRequired},
    {"num_hidden_layers", &LlamaConfig::num_layers, 1, kMaxLayers, kRequired},
    {"num_attention_heads", &LlamaConfig::num_heads, 1, kMaxHeads, kRequired},
    {"num_key_value_heads", &LlamaConfig::num_kv_heads, 1, kMaxHeads},
    {"head_dim", &LlamaConfig::head_dim, 1, kMaxHeadDim},
    {"max_position_embeddings", &LlamaConfig::max_positions, 1, kMaxPositions, kRequired},
    {"rms_norm_eps", &LlamaConfig::rms_norm_eps, 0, kMaxNormEps},
};

}  // namespace

LlamaConfig LlamaConfig::parse(const JsonFields& f, bool qk_norm) {
  LlamaConfig c;
  read_fields(f, kLlamaFields, c);
  if (!f.has("num_key_value_heads")) c.num_kv_heads = c.num_heads;
  if (!f.has("head_dim")) c.head_dim = c.num_heads > 0 ? c.hidden_size / c.num_heads : 0;
  c.rope = read_rope_config(f);
  c.tie_word_embeddings = f.get_or<bool>("tie_word_embeddings", false);
  c.attention_bias = f.get_or<bool>("attention_bias", false);
  c.mlp_bias = f.get_or<bool>("mlp_bias", false);
  c.qk_norm = qk_norm;
  check_fields(f.origin(), kLlamaFields, c);
  if (c.num_heads % c.num_kv_heads != 0) {
    fail(ErrorCode::InvalidFormat, "{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", f.origin(),
         c.num_heads, c.num_kv_heads);
  }
  if (c.head_dim % 2 != 0)
    fail(ErrorCode::InvalidFormat, "{}: head_dim {} must be even for rotary embeddings", f.origin(), c.head_dim);
  if (f.get_or<bool>("use_sliding_window", false)) {
    fail(ErrorCode::Unsupported, "{}: use_sliding_window = true is not supported", f.origin());
  }
  const std::string act = f.get_or<std::string>("hidden_act", "silu");
  if (act != "silu") fail(ErrorCode::Unsupported, "{}: hidden_act '{}' is not supported (silu)", f.origin(), act);
  return c;
}

DecoderLayerSpec LlamaConfig::layer_spec() const {
  DecoderLayerSpec spec;
  spec.attention.hidden_size = hidden_size;
  spec.attention.num_heads = num_heads;
  spec.attention.num_kv_heads = num_kv_heads;
  spec.attention.head_dim = head_dim;
  spec.attention.qkv_bias = attention_bias;
  spec.attention.output_bias = attention_bias;
  if (qk_norm) spec.attention.qk_norm_eps = rms_norm_eps;
  spec.intermediate_size = intermediate_size;
  spec.rms_norm_eps = rms_norm_eps;
  spec.mlp_bias = mlp_bias;
  return spec;
}

LlamaForCausalLM::LlamaForCausalLM(const HfConfig& hf, WeightSource& source, bool qk_norm)
    : LlamaForCausalLM(hf, source, LlamaConfig::parse(hf, qk_norm)) {}

LlamaForCausalLM::LlamaForCausalLM(const HfConfig& hf, WeightSource& source, const LlamaConfig& config)
    : TextLM(hf, config.vocab_size, config.hidden_size, config.max_positions), config_(config) {
  const LlamaConfig& c = config_;
  embed_tokens_ = Embedding(source, "model.embed_tokens.weight", c.vocab_size, c.hidden_size);
  load_head(source, embed_tokens_, c.tie_word_embeddings);  // before the layers (see load_head)
  layers_.reserve(static_cast<size_t>(c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    layers_.emplace_back(source, fmt::format("model.layers.{}", i), c.layer_spec());
  }
  norm_ = RMSNorm::load(source, "model.norm.weight", c.hidden_size, c.rms_norm_eps);
  int64_t layer_weight_bytes = 0;
  for (const DecoderLayer& layer : layers_) layer_weight_bytes += layer.weight_bytes();
  set_decode_weight_bytes(layer_weight_bytes);
  rope_ =
      std::make_unique<RotaryEmbedding>(c.rope, c.head_dim, c.max_positions, source.device(), source.compute_dtype());
}

std::vector<LayerCacheSpec> LlamaForCausalLM::cache_layout() const {
  std::vector<LayerCacheSpec> layout;
  for (const DecoderLayer& layer : layers_) layout.push_back(layer.cache_spec());
  return layout;
}

at::Tensor LlamaForCausalLM::forward(const ForwardContext& ctx, CacheBuffers& cache) const {
  at::Tensor h = embed_tokens_(ctx.input_ids, ctx.dtype);
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i](h, *rope_, cache.layer(i), ctx);
  return norm_(h, ctx);
}

}  // namespace izwi
