#include "models/lfm2_backbone.h"

#include <fmt/format.h>

#include "common/check.h"
#include "io/config_fields.h"
#include "io/hf_config.h"

namespace izwi {

namespace {

// The feed-forward width as Lfm2MLP derives it from the config.
int64_t lfm2_ffn_dim(const JsonFields& f, int64_t intermediate) {
  if (!f.get_or<bool>("block_auto_adjust_ff_dim", false)) return intermediate;
  int64_t dim = 2 * intermediate / 3;
  if (auto multiplier = f.get_optional<double>("block_ffn_dim_multiplier")) {
    const double scaled = *multiplier * static_cast<double>(dim);  // checked before the cast to int64
    if (!(scaled >= 1 && scaled <= static_cast<double>(kMaxIntermediateSize))) {
      fail(ErrorCode::InvalidFormat,
           "{}: field 'block_ffn_dim_multiplier' {} gives a feed-forward width outside [1, {}]", f.origin(),
           *multiplier, kMaxIntermediateSize);
    }
    dim = static_cast<int64_t>(scaled);
    const int64_t multiple = f.get<int64_t>("block_multiple_of");
    require_in_range(f.origin(), {{"block_multiple_of", multiple, 1, kMaxIntermediateSize}});
    dim = multiple * ((dim + multiple - 1) / multiple);
  }
  return dim;
}

// num_key_value_heads defaults to num_attention_heads (set after reading).
constexpr ConfigField<Lfm2Config> kLfm2Fields[] = {
    {"vocab_size", &Lfm2Config::vocab_size, 1, kMaxVocabSize, kRequired},
    {"hidden_size", &Lfm2Config::hidden_size, 1, kMaxHiddenSize, kRequired},
    {"intermediate_size", &Lfm2Config::intermediate_size, 1, kMaxIntermediateSize, kRequired},
    {"num_hidden_layers", &Lfm2Config::num_layers, 1, kMaxLayers, kRequired},
    {"num_attention_heads", &Lfm2Config::num_heads, 1, kMaxHeads, kRequired},
    {"num_key_value_heads", &Lfm2Config::num_kv_heads, 1, kMaxHeads},
    {"max_position_embeddings", &Lfm2Config::max_positions, 1, kMaxPositions, kRequired},
    {"conv_L_cache", &Lfm2Config::conv_kernel, 1, kMaxConvKernel},
    {"norm_eps", &Lfm2Config::norm_eps, 0, kMaxNormEps},
};

}  // namespace

Lfm2Config Lfm2Config::parse(const JsonFields& f) {
  Lfm2Config c;
  read_fields(f, kLfm2Fields, c);
  if (!f.has("num_key_value_heads")) c.num_kv_heads = c.num_heads;
  c.conv_bias = f.get_or<bool>("conv_bias", false);
  c.rope = read_rope_config(f);
  c.tie_word_embeddings = f.get_or<bool>("tie_word_embeddings", true);
  // intermediate_size is checked before lfm2_ffn_dim derives the feed-forward width from it, and
  // the width after.
  check_fields(f.origin(), kLfm2Fields, c);
  c.intermediate_size = lfm2_ffn_dim(f, c.intermediate_size);
  require_in_range(f.origin(), {{"intermediate_size", c.intermediate_size, 1, kMaxIntermediateSize}});
  if (c.hidden_size % c.num_heads != 0 || c.num_heads % c.num_kv_heads != 0) {
    fail(ErrorCode::InvalidFormat, "{}: hidden_size, num_attention_heads and num_key_value_heads do not divide",
         f.origin());
  }
  c.head_dim = c.hidden_size / c.num_heads;

  c.is_attention.assign(static_cast<size_t>(c.num_layers), false);
  if (f.has("layer_types")) {
    const auto types = f.get<std::vector<std::string>>("layer_types");
    if (static_cast<int64_t>(types.size()) != c.num_layers) {
      fail(ErrorCode::InvalidFormat, "{}: layer_types has {} entries for {} layers", f.origin(), types.size(),
           c.num_layers);
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "full_attention" && types[i] != "conv") {
        fail(ErrorCode::Unsupported, "{}: layer_types[{}] = '{}' (expected conv or full_attention)", f.origin(), i,
             types[i]);
      }
      c.is_attention[i] = types[i] == "full_attention";
    }
  } else {
    for (int64_t idx : f.get<std::vector<int64_t>>("full_attn_idxs")) {
      if (idx < 0 || idx >= c.num_layers)
        fail(ErrorCode::InvalidFormat, "{}: full_attn_idxs entry {} out of range", f.origin(), idx);
      c.is_attention[static_cast<size_t>(idx)] = true;
    }
  }
  return c;
}

Lfm2Backbone::Lfm2Backbone(WeightSource& source, const std::string& prefix, const Lfm2Config& config)
    : config_(config) {
  const Lfm2Config& c = config_;
  embed_tokens_ = Embedding(source, prefix + ".embed_tokens.weight", c.vocab_size, c.hidden_size);
  SelfAttentionSpec attn;
  attn.hidden_size = c.hidden_size;
  attn.num_heads = c.num_heads;
  attn.num_kv_heads = c.num_kv_heads;
  attn.head_dim = c.head_dim;
  attn.qk_norm_eps = c.norm_eps;
  attn.o_name = "out_proj";
  attn.q_norm_name = "q_layernorm";
  attn.k_norm_name = "k_layernorm";
  const GatedMlpNames ffn_names{"w1", "w3", "w2"};
  layers_.reserve(static_cast<size_t>(c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = fmt::format("{}.layers.{}", prefix, i);
    Layer layer{RMSNorm::load(source, p + ".operator_norm.weight", c.hidden_size, c.norm_eps), nullptr, nullptr,
                RMSNorm::load(source, p + ".ffn_norm.weight", c.hidden_size, c.norm_eps),
                GatedMlp(source, p + ".feed_forward", c.hidden_size, c.intermediate_size, false, false, ffn_names)};
    if (c.is_attention[static_cast<size_t>(i)]) {
      layer.attention = std::make_unique<SelfAttention>(source, p + ".self_attn", attn);
    } else {
      layer.conv = std::make_unique<ShortConv>(source, p + ".conv", c.hidden_size, c.conv_kernel, c.conv_bias);
    }
    layers_.push_back(std::move(layer));
  }
  // LFM2 names its final norm "embedding_norm"; it is applied after the last layer.
  final_norm_ = RMSNorm::load(source, prefix + ".embedding_norm.weight", c.hidden_size, c.norm_eps);
  rope_ =
      std::make_unique<RotaryEmbedding>(c.rope, c.head_dim, c.max_positions, source.device(), source.compute_dtype());
}

std::vector<LayerCacheSpec> Lfm2Backbone::cache_layout() const {
  std::vector<LayerCacheSpec> layout;
  for (const Layer& layer : layers_)
    layout.push_back(layer.attention ? layer.attention->cache_spec() : layer.conv->cache_spec());
  return layout;
}

at::Tensor Lfm2Backbone::forward(at::Tensor h, const ForwardContext& ctx, CacheBuffers& cache) const {
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = layers_[i];
    const at::Tensor normed = layer.operator_norm(h, ctx);
    const at::Tensor mixed = layer.attention ? (*layer.attention)(normed, *rope_, cache.layer(i), ctx)
                                             : (*layer.conv)(normed, cache.layer(i), ctx);
    h.add_(layer.feed_forward(layer.ffn_norm.add_and_norm(h, mixed, ctx), ctx));
  }
  return final_norm_(h, ctx);
}

int64_t Lfm2Backbone::layer_weight_bytes() const {
  int64_t total = 0;
  for (const Layer& layer : layers_) {
    total += layer.feed_forward.weight_bytes() +
             (layer.attention ? layer.attention->weight_bytes() : layer.conv->weight_bytes());
  }
  return total;
}

}  // namespace izwi
