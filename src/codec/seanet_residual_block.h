#pragma once
// SEANet's residual block as Mimi uses it: x + conv2(elu(conv1(elu(x)))), conv1 causal with
// kernel `kernel` and dilation, to dim / compress channels; conv2 a 1x1 back to dim. Streaming
// carries conv1's input context; the 1x1 needs none.

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "codec/causal_conv.h"
#include "io/weight_source.h"
#include "kernels/ops/activation_op.h"

namespace izwi {

class SeanetResidualBlock {
 public:
  SeanetResidualBlock() = default;
  /// Reads `<prefix>.block.1.conv.*` and `<prefix>.block.3.conv.*` (transformers' names).
  SeanetResidualBlock(WeightSource& weights, const std::string& prefix, int64_t dim, int64_t hidden, int64_t kernel,
                      int64_t dilation)
      : backend_(&weights.backend()),
        conv1_(weights, prefix + ".block.1.conv", dim, hidden, kernel, dilation),
        conv2_(weights, prefix + ".block.3.conv", hidden, dim, 1) {}

  at::Tensor initial_state(int64_t batch, const at::TensorOptions& options) const {
    return conv1_.initial_state(batch, options);
  }
  /// Streaming: `state` is conv1's carried input.
  at::Tensor forward(const at::Tensor& x, at::Tensor& state) const {
    return x + conv2_.forward(elu(conv1_.forward(elu(x), state)));
  }
  /// A whole sequence from the stream's start.
  at::Tensor forward(const at::Tensor& x) const { return x + conv2_.forward(elu(conv1_.forward(elu(x)))); }
  int64_t weight_bytes() const { return conv1_.weight_bytes() + conv2_.weight_bytes(); }

 private:
  at::Tensor elu(const at::Tensor& x) const { return ops::activation(*backend_, x, ops::Activation::Elu); }

  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  CausalConv1d conv1_, conv2_;
};

}  // namespace izwi
