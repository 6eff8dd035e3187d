#pragma once
// SnakeBeta activation (BigVGAN): x + 1/(exp(beta) + 1e-9) * sin(x * exp(alpha))^2, with alpha and
// beta stored in log scale, one per channel. Pointwise, so it needs no streaming state.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "io/weight_source.h"

namespace izwi {

class SnakeBeta {
 public:
  SnakeBeta() = default;
  /// Reads `<prefix>.alpha` and `<prefix>.beta` [channels]; precomputes exp(alpha) and the scale.
  SnakeBeta(WeightSource& weights, const std::string& prefix, int64_t channels) {
    const at::Tensor alpha = weights.take(prefix + ".alpha", {channels});
    const at::Tensor beta = weights.take(prefix + ".beta", {channels});
    alpha_ = alpha.exp().view({1, -1, 1});
    inv_beta_ = (1.0 / (beta.exp() + 1e-9)).view({1, -1, 1});
  }

  /// x [B, channels, T].
  at::Tensor forward(const at::Tensor& x) const { return at::addcmul(x, (x * alpha_).sin_().square_(), inv_beta_); }
  int64_t weight_bytes() const { return alpha_.nbytes() + inv_beta_.nbytes(); }

 private:
  at::Tensor alpha_, inv_beta_;
};

}  // namespace izwi
