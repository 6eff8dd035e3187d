#pragma once
// Rotary position embedding (rotate-half convention of Llama-style checkpoints) with the
// default, linear and llama3 frequency schedules. cos/sin tables are precomputed in float32
// exactly as transformers computes them, then indexed by position.

#include <ATen/ATen.h>

#include "io/hf_config.h"
#include "kernels/ops/rope_op.h"

namespace izwi {

class RotaryEmbedding {
 public:
  /// Tables cover positions [0, max_positions); max_positions 0 computes angles per call instead
  /// (for unbounded positions such as a stream's encoder frames).
  RotaryEmbedding(const RopeConfig& config, int64_t head_dim, int64_t max_positions, const at::Device& device,
                  at::ScalarType dtype);

  /// The tables (cos / sin [max_positions, head_dim / 2]) or inverse frequencies, for the kernels
  /// that rotate on the way (ops::attention_inputs).
  const ops::RopeAngles& angles() const { return angles_; }

 private:
  ops::RopeAngles angles_;
};

}  // namespace izwi
