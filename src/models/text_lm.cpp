#include "models/text_lm.h"

namespace izwi {

TextLM::TextLM(const HfConfig& hf, int64_t vocab_size, int64_t hidden_size, int64_t max_positions) {
  spec_ = base_spec(hf, hf.fields(), vocab_size, hidden_size, max_positions, GenerationDefaultsRule::HfGenerate);
  spec_.graph_safe_decode = true;
}

void TextLM::load_head(WeightSource& source, Embedding& embedding, bool tied) {
  lm_head_ = load_output_head(source, embedding, tied, "lm_head", spec_.vocab_size, spec_.hidden_size);
}

void TextLM::set_decode_weight_bytes(int64_t layer_weight_bytes) {
  spec_.decode_weight_bytes = lm_head_.weight_bytes() + layer_weight_bytes;
}

}  // namespace izwi
