#include "kernels/ops/activation_op.h"

namespace izwi::ops {

at::Tensor activation(const Backend& /*backend: every backend runs libtorch's*/, const at::Tensor& x, Activation kind) {
  switch (kind) {
    case Activation::Gelu:
      return at::gelu(x);
    case Activation::Silu:
      return at::silu(x);
    case Activation::Relu:
      return at::relu(x);
    case Activation::Elu:
      return at::elu(x);
    case Activation::Sigmoid:
      return at::sigmoid(x);
    case Activation::Tanh:
      return at::tanh(x);
  }
  return x;  // unreachable: every enumerator returns above
}

}  // namespace izwi::ops
