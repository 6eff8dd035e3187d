#include "kernels/ops/rope_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/rope_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/bf16_data.h"
#include "kernels/cuda/rope_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

#if IZWI_WITH_CUDA
namespace {

// What the CUDA kernels rotate by: float32 x by float32 tables, else by the angles from inv_freq;
// bf16 x by float32 or bf16 tables, else by the angles rounded to bf16 where a bf16 model's tables
// would be (angles.dtype).
enum class CudaRopeForm { None, FloatTables, Bf16Tables, Angles };

CudaRopeForm cuda_rope_form(const at::Tensor& x, const RopeAngles& angles) {
  const at::ScalarType tables = angles.cos.defined() ? angles.cos.scalar_type() : at::ScalarType::Undefined;
  const bool from_inv_freq = angles.inv_freq.defined() && angles.inv_freq.scalar_type() == at::kFloat;
  if (x.scalar_type() == at::kFloat) {
    if (tables == at::kFloat) return CudaRopeForm::FloatTables;
    return from_inv_freq ? CudaRopeForm::Angles : CudaRopeForm::None;
  }
  if (x.scalar_type() != at::kBFloat16) return CudaRopeForm::None;
  if (tables == at::kFloat) return CudaRopeForm::FloatTables;
  if (tables == at::kBFloat16) return CudaRopeForm::Bf16Tables;
  return from_inv_freq && angles.dtype == at::kBFloat16 ? CudaRopeForm::Angles : CudaRopeForm::None;
}

at::Tensor rope_on_device(const at::Tensor& x, const at::Tensor& positions, const RopeAngles& angles,
                          CudaRopeForm form) {
  at::Tensor y = x.is_contiguous() ? x.clone() : x.contiguous();  // a fresh buffer either way
  const at::Tensor pos = positions.contiguous();
  const int64_t* p = pos.data_ptr<int64_t>();
  const int64_t tokens = y.size(0), heads = y.size(1), head_dim = y.size(2);
  const cudaStream_t stream = current_cuda_stream();
  const at::Tensor &cos = angles.cos, &sin = angles.sin;
  const bool bf16 = y.scalar_type() == at::kBFloat16;
  switch (form) {
    case CudaRopeForm::FloatTables:
      if (bf16) {
        rope_cuda(bf16_data(y), p, cos.data_ptr<float>(), sin.data_ptr<float>(), tokens, heads, head_dim, stream);
      } else {
        rope_cuda(y.data_ptr<float>(), p, cos.data_ptr<float>(), sin.data_ptr<float>(), tokens, heads, head_dim,
                  stream);
      }
      break;
    case CudaRopeForm::Bf16Tables:
      rope_cuda(bf16_data(y), p, bf16_data(cos), bf16_data(sin), tokens, heads, head_dim, stream);
      break;
    case CudaRopeForm::Angles:
      if (bf16) {
        rope_angles_cuda(bf16_data(y), p, angles.inv_freq.data_ptr<float>(), tokens, heads, head_dim, stream);
      } else {
        rope_angles_cuda(y.data_ptr<float>(), p, angles.inv_freq.data_ptr<float>(), tokens, heads, head_dim, stream);
      }
      break;
    case CudaRopeForm::None:
      break;
  }
  return y;
}

}  // namespace
#endif

at::Tensor rope(const Backend& backend, const at::Tensor& x, const at::Tensor& positions, const RopeAngles& angles) {
  const OpTimer timer(ProfiledOp::Rope, x.size(0));
  const at::Tensor &cos = angles.cos, &sin = angles.sin, &inv_freq = angles.inv_freq;
  const bool tables = angles.float32_tables();
  if (backend.cpu_kernels() && tables && x.scalar_type() == at::kFloat && x.is_cpu()) {
    at::Tensor y = x.is_contiguous() ? x.clone() : x.contiguous();  // a fresh buffer either way
    rope_cpu(y.data_ptr<float>(), positions.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(),
             y.size(0), y.size(1), y.size(2));
    return y;
  }
#if IZWI_WITH_CUDA
  if (backend.cuda_kernels() && x.is_cuda()) {
    const CudaRopeForm form = cuda_rope_form(x, angles);
    if (form != CudaRopeForm::None) return rope_on_device(x, positions, angles, form);
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
