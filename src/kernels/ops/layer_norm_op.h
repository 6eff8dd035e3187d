#pragma once
// The LayerNorm dispatch point (the codecs' and the audio encoders' norms with a mean; RMSNorm has
// its own, rms_norm_op.h).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// (x - mean) / sqrt(var + eps) * weight + bias over the last dim; bias may be undefined (no
/// shift). Every backend: libtorch's layer_norm.
at::Tensor layer_norm(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      double eps);

}  // namespace izwi::ops
