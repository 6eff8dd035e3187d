#include "kernels/ops/rope_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/rope_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/rope_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

at::Tensor rope(KernelBackend backend, const at::Tensor& x, const at::Tensor& positions, const RopeAngles& angles) {
  const OpTimer timer(ProfiledOp::Rope, x.size(0));
  const at::Tensor &cos = angles.cos, &sin = angles.sin, &inv_freq = angles.inv_freq;
  const bool tables = angles.float32_tables();
  if (backend == KernelBackend::Cpu && tables && x.scalar_type() == at::kFloat && x.is_cpu()) {
    at::Tensor y = x.is_contiguous() ? x.clone() : x.contiguous();  // a fresh buffer either way
    rope_cpu(y.data_ptr<float>(), positions.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(),
             y.size(0), y.size(1), y.size(2));
    return y;
  }
#if IZWI_WITH_CUDA
  if (backend == KernelBackend::Cuda && x.scalar_type() == at::kFloat && x.is_cuda() &&
      (tables || inv_freq.scalar_type() == at::kFloat)) {
    at::Tensor y = x.is_contiguous() ? x.clone() : x.contiguous();
    const at::Tensor pos = positions.contiguous();
    if (tables) {
      rope_cuda(y.data_ptr<float>(), pos.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(), y.size(0),
                y.size(1), y.size(2), current_cuda_stream());
    } else {
      rope_angles_cuda(y.data_ptr<float>(), pos.data_ptr<int64_t>(), inv_freq.data_ptr<float>(), y.size(0), y.size(1),
                       y.size(2), current_cuda_stream());
    }
    return y;
  }
#endif
  const int64_t half = x.size(-1) / 2;
  at::Tensor c, s;
  if (cos.defined()) {
    c = cos.index_select(0, positions).unsqueeze(1);
    s = sin.index_select(0, positions).unsqueeze(1);
  } else {
    const at::Tensor freqs = at::outer(positions.to(at::kFloat), inv_freq);
    c = freqs.cos().to(angles.dtype).unsqueeze(1);
    s = freqs.sin().to(angles.dtype).unsqueeze(1);
  }
  const at::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return at::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
}

}  // namespace izwi::ops
