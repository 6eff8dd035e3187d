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
  /// Runs through ops::snake_beta on the weights' backend, which must outlive it.
  SnakeBeta(WeightSource& weights, const std::string& prefix, int64_t channels);

  /// x [B, channels, T].
  at::Tensor forward(const at::Tensor& x) const;
  /// The same written into `out`, a [B, channels, T] view whose rows (the last dimension) are
  /// contiguous and evenly spaced: the tail of a convolution's padded input.
  void forward_into(const at::Tensor& x, const at::Tensor& out) const;
  int64_t weight_bytes() const { return alpha_.nbytes() + inv_beta_.nbytes(); }

 private:
  const Backend* backend_ = nullptr;
  at::Tensor alpha_, inv_beta_;  ///< [1, channels, 1]
};

}  // namespace izwi
