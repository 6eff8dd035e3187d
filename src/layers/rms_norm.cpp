#include "layers/rms_norm.h"

#include "kernels/cpu/rms_norm_cpu.h"

namespace izwi {

RMSNorm RMSNorm::load(WeightSource& source, const std::string& name, int64_t dim, double eps) {
  return RMSNorm{source.take(name, {dim}), eps};
}

at::Tensor RMSNorm::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  if (ctx.fast_kernels && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat) {
    const at::Tensor xc = x.contiguous();
    at::Tensor y = at::empty_like(xc);
    const int64_t dim = xc.size(-1);
    rms_norm_cpu(xc.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), xc.numel() / dim, dim,
                 static_cast<float>(eps));
    return y;
  }
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

}  // namespace izwi
