#include "models/lfm2.h"

#include "io/generation_defaults.h"

namespace izwi {

Lfm2ForCausalLM::Lfm2ForCausalLM(const HfConfig& hf, WeightSource& source)
    : backbone_(source, "model", Lfm2Config::parse(hf.fields())) {
  const Lfm2Config& c = backbone_.config();
  spec_ = base_spec(hf.model_type(), hf.fields(), c.vocab_size, c.hidden_size, c.max_positions);
  spec_.default_sampling = read_generation_defaults(hf.model_dir(), GenerationDefaultsRule::HfGenerate).sampling;
  spec_.needs_state_slots = true;
  spec_.graph_safe_decode = true;
  lm_head_ =
      load_output_head(source, backbone_.embed_tokens(), c.tie_word_embeddings, "lm_head", c.vocab_size, c.hidden_size);
  spec_.decode_weight_bytes = lm_head_.weight_bytes() + backbone_.layer_weight_bytes();
}

std::vector<LayerCacheSpec> Lfm2ForCausalLM::cache_layout() const { return backbone_.cache_layout(); }

at::Tensor Lfm2ForCausalLM::forward(const ForwardContext& ctx, CacheBuffers& cache) const {
  return backbone_.forward(backbone_.embed_tokens()(ctx.input_ids, ctx.dtype), ctx, cache);
}

at::Tensor Lfm2ForCausalLM::logits(const at::Tensor& hidden, const ForwardContext& ctx) const {
  return lm_head_(hidden, ctx);
}

}  // namespace izwi
