#include "layers/rms_norm.h"

#include "kernels/ops/rms_norm_op.h"

namespace izwi {

RMSNorm RMSNorm::load(WeightSource& source, const std::string& name, int64_t dim, double eps) {
  return RMSNorm{source.take(name, {dim}), eps};
}

at::Tensor RMSNorm::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  return ops::rms_norm(*ctx.backend, x, weight, eps);
}

at::Tensor RMSNorm::add_and_norm(at::Tensor& residual, const at::Tensor& x, const ForwardContext& ctx) const {
  return ops::add_rms_norm(*ctx.backend, residual, x, weight, eps);
}

}  // namespace izwi
