#include "layers/rms_norm.h"

namespace izwi {

RMSNorm RMSNorm::load(WeightLoader& loader, const std::string& name, int64_t dim, double eps) {
  return RMSNorm{loader.take(name, {dim}), eps};
}

at::Tensor RMSNorm::operator()(const at::Tensor& x) const {
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

}  // namespace izwi
