#include "kernels/ops/silu_mul_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/silu_mul_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/bf16_data.h"
#include "kernels/cuda/silu_mul_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

at::Tensor silu_mul(const Backend& backend, const at::Tensor& gate_up, int64_t width) {
  const OpTimer timer(ProfiledOp::Activation, gate_up.size(0));
  const bool fused = gate_up.scalar_type() == at::kFloat && gate_up.is_contiguous();
  if (backend.cpu_kernels() && fused && gate_up.is_cpu()) {
    at::Tensor product = at::empty({gate_up.size(0), width}, gate_up.options());
    silu_mul_cpu(gate_up.data_ptr<float>(), product.data_ptr<float>(), gate_up.size(0), width);
    return product;
  }
#if IZWI_WITH_CUDA
  const bool bf16 = gate_up.scalar_type() == at::kBFloat16 && gate_up.is_contiguous();
  if (backend.cuda_kernels() && (fused || bf16) && gate_up.is_cuda()) {
    at::Tensor product = at::empty({gate_up.size(0), width}, gate_up.options());
    if (bf16) {
      silu_mul_cuda(bf16_data(gate_up), bf16_data(product), gate_up.size(0), width, current_cuda_stream());
    } else {
      silu_mul_cuda(gate_up.data_ptr<float>(), product.data_ptr<float>(), gate_up.size(0), width,
                    current_cuda_stream());
    }
    return product;
  }
#endif
  return at::silu(gate_up.narrow(1, 0, width)) * gate_up.narrow(1, width, width);
}

}  // namespace izwi::ops
