#pragma once
// SwiGLU feed-forward: down(silu(gate(x)) * up(x)), with gate and up stacked into one matrix.

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/linear.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct GatedMlpNames {
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
};

class GatedMlp {
 public:
  /// `gate_up_bias` / `down_bias`: which projections carry biases (they differ by architecture).
  GatedMlp(WeightSource& source, const std::string& prefix, int64_t hidden_size, int64_t intermediate_size,
           bool gate_up_bias, bool down_bias, const GatedMlpNames& names = {});
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const;
  int64_t weight_bytes() const { return gate_up_.weight_bytes() + down_.weight_bytes(); }

 private:
  int64_t intermediate_size_;
  Linear gate_up_, down_;
};

}  // namespace izwi
