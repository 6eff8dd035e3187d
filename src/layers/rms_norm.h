#pragma once
// RMSNorm over the last dimension, computed in float32 as transformers does.

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct RMSNorm {
  at::Tensor weight;
  double eps = 1e-6;

  static RMSNorm load(WeightSource& source, const std::string& name, int64_t dim, double eps);
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const;
  /// residual += x, then the norm of the sum (one kernel where the backend fuses them).
  at::Tensor add_and_norm(at::Tensor& residual, const at::Tensor& x, const ForwardContext& ctx) const;
};

}  // namespace izwi
