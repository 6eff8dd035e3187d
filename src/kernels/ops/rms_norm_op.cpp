#include "kernels/ops/rms_norm_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/rms_norm_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/rms_norm_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

at::Tensor rms_norm(KernelBackend backend, const at::Tensor& x, const at::Tensor& weight, double eps) {
  const OpTimer timer(ProfiledOp::Norm, x.size(0));
  const bool float32 = x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat;
  if (backend == KernelBackend::Cpu && float32 && x.is_cpu()) {
    const at::Tensor xc = x.contiguous();
    at::Tensor y = at::empty_like(xc);
    const int64_t dim = xc.size(-1);
    rms_norm_cpu(xc.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), xc.numel() / dim, dim,
                 static_cast<float>(eps));
    return y;
  }
#if IZWI_WITH_CUDA
  if (backend == KernelBackend::Cuda && float32 && x.is_cuda()) {
    const at::Tensor xc = x.contiguous(), wc = weight.contiguous();
    at::Tensor y = at::empty_like(xc);
    const int64_t dim = xc.size(-1);
    rms_norm_cuda(xc.data_ptr<float>(), nullptr, wc.data_ptr<float>(), y.data_ptr<float>(), xc.numel() / dim, dim,
                  static_cast<float>(eps), current_cuda_stream());
    return y;
  }
#endif
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

at::Tensor add_rms_norm(KernelBackend backend, at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                        double eps) {
#if IZWI_WITH_CUDA
  const bool float32 =
      residual.scalar_type() == at::kFloat && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat;
  if (backend == KernelBackend::Cuda && float32 && residual.is_cuda() && residual.is_contiguous() &&
      residual.sizes() == x.sizes()) {
    const OpTimer timer(ProfiledOp::Norm, x.size(0));
    const at::Tensor xc = x.contiguous(), wc = weight.contiguous();
    at::Tensor y = at::empty_like(residual);
    const int64_t dim = residual.size(-1);
    rms_norm_cuda(xc.data_ptr<float>(), residual.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(),
                  residual.numel() / dim, dim, static_cast<float>(eps), current_cuda_stream());
    return y;
  }
#endif
  residual.add_(x);
  return rms_norm(backend, residual, weight, eps);
}

}  // namespace izwi::ops
