#pragma once
// Turns one row of logits into a token id, applying the processors in Hugging Face's order:
// repetition penalty, min-tokens suppression, temperature, top-k, top-p, then a draw (or argmax).

#include <cstdint>
#include <vector>

#include "layers/step/sampling_state.h"

namespace izwi {

class Sampler {
 public:
  /// `logits` has `vocab_size` entries and is modified in place (scratch).
  int32_t sample(float* logits, int32_t vocab_size, SamplingState& state);

 private:
  void apply_repetition_penalty(float* logits, int32_t vocab_size, const SamplingState& state);

  // Scratch reused across calls.
  std::vector<int32_t> order_;
  std::vector<float> probs_;
  std::vector<uint8_t> seen_;
};

}  // namespace izwi
