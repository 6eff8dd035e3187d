#pragma once
// Rotary position embedding (rotate-half convention of Llama-style checkpoints) with the
// default, linear and llama3 frequency schedules. cos/sin tables are precomputed in float32
// exactly as transformers computes them, then indexed by position.

#include <ATen/ATen.h>

#include "io/hf_config.h"
#include "layers/step/forward_context.h"

namespace izwi {

class RotaryEmbedding {
 public:
  /// Tables cover positions [0, max_positions); max_positions 0 computes angles per call instead
  /// (for unbounded positions such as a stream's encoder frames).
  RotaryEmbedding(const RopeConfig& config, int64_t head_dim, int64_t max_positions, const at::Device& device,
                  at::ScalarType dtype);

  /// Rotates x: [T, heads, head_dim]; row t is at position ctx.positions[t].
  at::Tensor apply(const at::Tensor& x, const ForwardContext& ctx) const;
  /// Same with explicit positions [T] (int64), through libtorch ops.
  at::Tensor apply(const at::Tensor& x, const at::Tensor& positions) const;
  /// The inverse frequencies (head_dim / 2), for tests.
  const at::Tensor& inv_freq() const { return inv_freq_; }

 private:
  at::Tensor inv_freq_;
  at::ScalarType dtype_;
  at::Tensor cos_;  ///< [max_positions, head_dim / 2]
  at::Tensor sin_;
};

}  // namespace izwi
