#pragma once
// The pointwise-activation dispatch point (the gated SiLU of the decoders' MLPs has its own,
// silu_mul_op.h; the codec's SnakeBeta too, snake_beta_op.h).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

enum class Activation {
  Gelu,  ///< exact (erf) GELU
  Silu,
  Relu,
  Elu,  ///< alpha 1
  Sigmoid,
  Tanh,
};

/// The activation of x, elementwise, into a new tensor. Every backend: libtorch's.
at::Tensor activation(const Backend& backend, const at::Tensor& x, Activation kind);

}  // namespace izwi::ops
