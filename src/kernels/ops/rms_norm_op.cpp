#include "kernels/ops/rms_norm_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/rms_norm_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/bf16_data.h"
#include "kernels/cuda/rms_norm_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

#if IZWI_WITH_CUDA
namespace {

// What the CUDA kernel takes: float32 x with float32 weights, bf16 x with float32 or bf16 weights.
bool cuda_kernel_dtypes(const at::Tensor& x, const at::Tensor& weight) {
  const at::ScalarType w = weight.scalar_type();
  if (x.scalar_type() == at::kFloat) return w == at::kFloat;
  return x.scalar_type() == at::kBFloat16 && (w == at::kFloat || w == at::kBFloat16);
}

// rms_norm_cuda on contiguous x (and residual, updated in place, when not null) of
// cuda_kernel_dtypes; returns y, shaped and typed as x.
at::Tensor rms_norm_on_device(const at::Tensor& x, at::Tensor* residual, const at::Tensor& weight, double eps) {
  const at::Tensor wc = weight.contiguous();
  at::Tensor y = at::empty_like(x);
  const int64_t dim = x.size(-1), rows = x.numel() / dim;
  const float e = static_cast<float>(eps);
  const cudaStream_t stream = current_cuda_stream();
  if (x.scalar_type() == at::kFloat) {
    rms_norm_cuda(x.data_ptr<float>(), residual != nullptr ? residual->data_ptr<float>() : nullptr,
                  wc.data_ptr<float>(), y.data_ptr<float>(), rows, dim, e, stream);
  } else if (wc.scalar_type() == at::kFloat) {
    rms_norm_cuda(bf16_data(x), residual != nullptr ? bf16_data(*residual) : nullptr, wc.data_ptr<float>(),
                  bf16_data(y), rows, dim, e, stream);
  } else {
    rms_norm_cuda(bf16_data(x), residual != nullptr ? bf16_data(*residual) : nullptr, bf16_data(wc), bf16_data(y), rows,
                  dim, e, stream);
  }
  return y;
}

}  // namespace
#endif

at::Tensor rms_norm(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, double eps) {
  const OpTimer timer(ProfiledOp::Norm, x.size(0));
  const bool float32 = x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat;
  if (backend.cpu_kernels() && float32 && x.is_cpu()) {
    const at::Tensor xc = x.contiguous();
    at::Tensor y = at::empty_like(xc);
    const int64_t dim = xc.size(-1);
    rms_norm_cpu(xc.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), xc.numel() / dim, dim,
                 static_cast<float>(eps));
    return y;
  }
#if IZWI_WITH_CUDA
  if (backend.cuda_kernels() && x.is_cuda() && cuda_kernel_dtypes(x, weight)) {
    return rms_norm_on_device(x.contiguous(), nullptr, weight, eps);
  }
#endif
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

at::Tensor add_rms_norm(const Backend& backend, at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                        double eps) {
#if IZWI_WITH_CUDA
  if (backend.cuda_kernels() && residual.is_cuda() && residual.is_contiguous() && residual.sizes() == x.sizes() &&
      x.scalar_type() == residual.scalar_type() && cuda_kernel_dtypes(residual, weight)) {
    const OpTimer timer(ProfiledOp::Norm, x.size(0));
    return rms_norm_on_device(x.contiguous(), &residual, weight, eps);
  }
#endif
  residual.add_(x);
  return rms_norm(backend, residual, weight, eps);
}

}  // namespace izwi::ops
