#pragma once
// LFM2 text model: the LFM2 backbone (lfm2_backbone.h) under "model." and its output head
// (tied to the embedding unless the config says otherwise).

#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/linear.h"
#include "models/causal_lm.h"
#include "models/lfm2_backbone.h"

namespace izwi {

class Lfm2ForCausalLM final : public CausalLM {
 public:
  Lfm2ForCausalLM(const HfConfig& config, WeightSource& source);

  const ModelSpec& spec() const override { return spec_; }
  std::vector<LayerCacheSpec> cache_layout() const override;
  at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const override;
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const override;

 private:
  Lfm2Backbone backbone_;
  ModelSpec spec_;
  Linear lm_head_;
};

}  // namespace izwi
