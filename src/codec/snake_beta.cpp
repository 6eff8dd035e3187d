#include "codec/snake_beta.h"

#include "kernels/cpu/snake_beta_cpu.h"

namespace izwi {

SnakeBeta::SnakeBeta(WeightSource& weights, const std::string& prefix, int64_t channels)
    : cpu_kernels_(weights.cpu_kernels() != nullptr) {
  const at::Tensor alpha = weights.take(prefix + ".alpha", {channels});
  const at::Tensor beta = weights.take(prefix + ".beta", {channels});
  alpha_ = alpha.exp().view({1, -1, 1}).contiguous();
  inv_beta_ = (1.0 / (beta.exp() + 1e-9)).view({1, -1, 1}).contiguous();
}

bool SnakeBeta::fused(const at::Tensor& x) const {
  return cpu_kernels_ && x.is_cpu() && x.scalar_type() == at::kFloat && alpha_.scalar_type() == at::kFloat &&
         x.dim() == 3;
}

at::Tensor SnakeBeta::forward(const at::Tensor& x) const {
  if (!fused(x)) return at::addcmul(x, (x * alpha_).sin_().square_(), inv_beta_);
  at::Tensor out = at::empty(x.sizes(), x.options());
  forward_into(x, out);
  return out;
}

void SnakeBeta::forward_into(const at::Tensor& x, const at::Tensor& out) const {
  if (!fused(x) || out.scalar_type() != at::kFloat || out.stride(2) != 1 ||
      out.stride(0) != out.size(1) * out.stride(1)) {
    out.copy_(at::addcmul(x, (x * alpha_).sin_().square_(), inv_beta_));
    return;
  }
  const at::Tensor xc = x.contiguous();
  snake_beta_cpu(xc.data_ptr<float>(), alpha_.data_ptr<float>(), inv_beta_.data_ptr<float>(), out.data_ptr<float>(),
                 xc.size(0) * xc.size(1), xc.size(1), xc.size(2), out.stride(1));
}

}  // namespace izwi
