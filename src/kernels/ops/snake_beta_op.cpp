#include "kernels/ops/snake_beta_op.h"

#include "kernels/cpu/snake_beta_cpu.h"

namespace izwi::ops {

void snake_beta(const Backend& backend, const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& inv_beta,
                const at::Tensor& out) {
  const bool float32 = x.scalar_type() == at::kFloat && alpha.scalar_type() == at::kFloat &&
                       inv_beta.scalar_type() == at::kFloat && out.scalar_type() == at::kFloat;
  if (backend.cpu_kernels() && float32 && x.is_cpu() && x.dim() == 3 && out.stride(2) == 1 &&
      out.stride(0) == out.size(1) * out.stride(1) && alpha.is_contiguous() && inv_beta.is_contiguous()) {
    const at::Tensor xc = x.contiguous();
    snake_beta_cpu(xc.data_ptr<float>(), alpha.data_ptr<float>(), inv_beta.data_ptr<float>(), out.data_ptr<float>(),
                   xc.size(0) * xc.size(1), xc.size(1), xc.size(2), out.stride(1));
    return;
  }
  out.copy_(at::addcmul(x, (x * alpha).sin_().square_(), inv_beta));
}

}  // namespace izwi::ops
