#include "codec/snake_beta.h"

#include "kernels/ops/snake_beta_op.h"

namespace izwi {

SnakeBeta::SnakeBeta(WeightSource& weights, const std::string& prefix, int64_t channels)
    : backend_(&weights.backend()) {
  const at::Tensor alpha = weights.take(prefix + ".alpha", {channels});
  const at::Tensor beta = weights.take(prefix + ".beta", {channels});
  alpha_ = alpha.exp().view({1, -1, 1}).contiguous();
  inv_beta_ = (1.0 / (beta.exp() + 1e-9)).view({1, -1, 1}).contiguous();
}

at::Tensor SnakeBeta::forward(const at::Tensor& x) const {
  at::Tensor out = at::empty(x.sizes(), x.options());
  forward_into(x, out);
  return out;
}

void SnakeBeta::forward_into(const at::Tensor& x, const at::Tensor& out) const {
  ops::snake_beta(*backend_, x, alpha_, inv_beta_, out);
}

}  // namespace izwi
