#include "kernels/ops/short_conv_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/short_conv_cpu.h"

namespace izwi::ops {

at::Tensor short_conv(KernelBackend backend, const at::Tensor& bx, at::Tensor state, const at::Tensor& weight_t,
                      const at::Tensor& bias, at::Tensor out) {
  const OpTimer timer(ProfiledOp::ShortConv, bx.size(0));
  const int64_t length = bx.size(0), channels = bx.size(1), kernel = weight_t.size(0), width = kernel - 1;
  if (backend == KernelBackend::Cpu && bx.is_cpu() && bx.scalar_type() == at::kFloat && bx.is_contiguous() &&
      out.is_contiguous()) {
    at::Tensor window = at::empty({width + length, channels}, bx.options());
    short_conv_cpu(bx.data_ptr<float>(), length, channels, kernel, weight_t.data_ptr<float>(),
                   bias.defined() ? bias.data_ptr<float>() : nullptr, state.data_ptr<float>(), window.data_ptr<float>(),
                   out.data_ptr<float>());
    return window;
  }
  const at::Tensor window = at::cat({state, bx}, 0);
  at::Tensor sum = window.narrow(0, 0, length) * weight_t[0];
  for (int64_t k = 1; k < kernel; ++k) sum += window.narrow(0, k, length) * weight_t[k];
  if (bias.defined()) sum += bias;
  out.copy_(sum);
  state.copy_(window.narrow(0, length, width));
  return window;
}

}  // namespace izwi::ops
