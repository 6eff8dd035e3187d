#include "kernels/ops/silu_mul_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/silu_mul_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/silu_mul_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

at::Tensor silu_mul(KernelBackend backend, const at::Tensor& gate_up, int64_t width) {
  const OpTimer timer(ProfiledOp::Activation, gate_up.size(0));
  const bool fused = gate_up.scalar_type() == at::kFloat && gate_up.is_contiguous();
  if (backend == KernelBackend::Cpu && fused && gate_up.is_cpu()) {
    at::Tensor product = at::empty({gate_up.size(0), width}, gate_up.options());
    silu_mul_cpu(gate_up.data_ptr<float>(), product.data_ptr<float>(), gate_up.size(0), width);
    return product;
  }
#if IZWI_WITH_CUDA
  if (backend == KernelBackend::Cuda && fused && gate_up.is_cuda()) {
    at::Tensor product = at::empty({gate_up.size(0), width}, gate_up.options());
    silu_mul_cuda(gate_up.data_ptr<float>(), product.data_ptr<float>(), gate_up.size(0), width, current_cuda_stream());
    return product;
  }
#endif
  return at::silu(gate_up.narrow(1, 0, width)) * gate_up.narrow(1, width, width);
}

}  // namespace izwi::ops
