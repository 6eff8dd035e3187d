#pragma once
// LFM2 text model: the LFM2 backbone (lfm2_backbone.h) under "model." and its output head
// (tied to the embedding unless the config says otherwise).

#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "models/lfm2_backbone.h"
#include "models/text_lm.h"

namespace izwi {

class Lfm2ForCausalLM final : public TextLM {
 public:
  Lfm2ForCausalLM(const HfConfig& config, WeightSource& source);

  std::vector<LayerCacheSpec> cache_layout() const override { return backbone_.cache_layout(); }
  at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const override;

 private:
  Lfm2ForCausalLM(const HfConfig& hf, WeightSource& source, const Lfm2Config& config);

  Lfm2Backbone backbone_;
};

}  // namespace izwi
