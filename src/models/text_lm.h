#pragma once
// What the decoder-only text models (Llama / Qwen3, LFM2) share around their decoder stacks: the
// spec (config.json's sizes and ids, Hugging Face generate's sampling defaults, graph-safe decode
// steps) and the output head over the final-norm hidden states. Each model adds its stack
// (cache_layout, forward).

#include <ATen/ATen.h>

#include <cstdint>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "models/causal_lm.h"

namespace izwi {

class TextLM : public CausalLM {
 public:
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const final { return lm_head_(hidden, ctx); }

 protected:
  /// The spec of a text model of these sizes (from its parsed config).
  TextLM(const HfConfig& hf, int64_t vocab_size, int64_t hidden_size, int64_t max_positions);
  /// Loads the output head (`lm_head`, or `embedding` when `tied`). Best right after the
  /// embedding, before the layers: a tied table is repacked for the kernels, and the table and its
  /// packed copy then coexist while little else is loaded, instead of at the load's peak.
  void load_head(WeightSource& source, Embedding& embedding, bool tied);
  /// Sets the spec's decode_weight_bytes: the head's plus the stack's `layer_weight_bytes`.
  void set_decode_weight_bytes(int64_t layer_weight_bytes);

 private:
  Linear lm_head_;
};

}  // namespace izwi
