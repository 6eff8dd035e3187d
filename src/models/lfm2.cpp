#include "models/lfm2.h"

namespace izwi {

Lfm2ForCausalLM::Lfm2ForCausalLM(const HfConfig& hf, WeightSource& source)
    : Lfm2ForCausalLM(hf, source, Lfm2Config::parse(hf.fields())) {}

Lfm2ForCausalLM::Lfm2ForCausalLM(const HfConfig& hf, WeightSource& source, const Lfm2Config& config)
    : TextLM(hf, config.vocab_size, config.hidden_size, config.max_positions), backbone_(source, "model", config) {
  spec_.needs_state_slots = true;
  load_head(source, backbone_.embed_tokens(), config.tie_word_embeddings);
  set_decode_weight_bytes(backbone_.layer_weight_bytes());
}

at::Tensor Lfm2ForCausalLM::forward(const ForwardContext& ctx, CacheBuffers& cache) const {
  return backbone_.forward(backbone_.embed_tokens()(ctx.input_ids, ctx.dtype), ctx, cache);
}

}  // namespace izwi
