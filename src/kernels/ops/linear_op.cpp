#include "kernels/ops/linear_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/linear_cpu.h"

namespace izwi::ops {

at::Tensor linear(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool cpu_weight = weight.scalar_type() == at::kFloat || weight.scalar_type() == at::kBFloat16;
  if (backend.cpu_kernels() && x.is_cpu() && x.scalar_type() == at::kFloat && cpu_weight && weight.is_contiguous() &&
      (!bias.defined() || (bias.scalar_type() == at::kFloat && bias.is_contiguous()))) {
    const int64_t out_features = weight.size(0), in_features = weight.size(1);
    const at::Tensor xc = x.reshape({-1, in_features}).contiguous();
    at::Tensor y = at::empty({xc.size(0), out_features}, xc.options());
    linear_cpu(xc.data_ptr<float>(), xc.size(0), in_features, weight.data_ptr(),
               weight.scalar_type() == at::kFloat ? WeightFormat::F32 : WeightFormat::BF16, out_features,
               bias.defined() ? bias.data_ptr<float>() : nullptr, y.data_ptr<float>());
    if (x.dim() == 2) return y;
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = out_features;
    return y.view(shape);
  }
  // The CPU kernels time themselves; this times libtorch's product (cuBLAS on a GPU).
  const OpTimer timer = linear_call_timer(x.numel() / weight.size(1), weight.size(1), weight.size(0));
  return at::linear(x, weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type()), bias);
}

}  // namespace izwi::ops
