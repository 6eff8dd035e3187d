#pragma once
// Sampling on a CUDA device (CUDA builds only): the rows' controls and id lists go to the device in
// one staged copy, kernels/cuda/sample_cuda picks the ids there, and they stay there (the caller
// copies them back, or feeds them to the next draw of a chain).

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "layers/step/sampling_state.h"

namespace izwi {

class DeviceSampler {
 public:
  /// logits [rows, vocab] on a CUDA device; row r sampled with *states[r], whose draw index
  /// advances by one. The ids [rows] (int64) stay on the device: no copy back, no wait. The logits
  /// are scratch (modified in place when already float32).
  at::Tensor sample(const at::Tensor& logits, const std::vector<SamplingState*>& states);

 private:
  at::Tensor workspace_;  ///< Device bit sets of the repetition penalty: zeroed once, left zeroed.
};

}  // namespace izwi
