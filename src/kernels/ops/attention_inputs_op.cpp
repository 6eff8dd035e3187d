#include "kernels/ops/attention_inputs_op.h"

#include <optional>

#include "common/op_profile.h"
#include "kernels/cpu/attention_inputs_cpu.h"
#include "kernels/ops/rms_norm_op.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/attention_inputs_cuda.h"
#include "kernels/cuda_stream.h"
#include "kernels/ops/cuda_element_dtype.h"
#endif

namespace izwi::ops {

namespace {

bool float32_or_absent(const at::Tensor& t) { return !t.defined() || t.scalar_type() == at::kFloat; }

const float* data_or_null(const at::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

#if IZWI_WITH_CUDA
// attention_inputs_cuda over the tensors, when it takes their dtypes and layouts: the heads read
// along a row (stride 1), contiguous pools of one dtype, norms of one dtype (or none) and the
// tables or, without them, float32 inv_freq. Returns an undefined tensor otherwise.
at::Tensor attention_inputs_on_device(const at::Tensor& qkv, const AttentionHeads& heads, const RopeAngles& angles,
                                      const at::Tensor& positions, const at::Tensor& slot_mapping, at::Tensor& key_pool,
                                      at::Tensor& value_pool) {
  const at::Tensor& norm = heads.q_norm.defined() ? heads.q_norm : heads.k_norm;
  const bool tables = angles.cos.defined();
  const std::optional<ElementDtype> activations = cuda_element_dtype(qkv.scalar_type(), false);
  const std::optional<ElementDtype> pools = cuda_element_dtype(key_pool.scalar_type(), true);
  const std::optional<ElementDtype> norms =
      norm.defined() ? cuda_element_dtype(norm.scalar_type(), false) : ElementDtype::Float32;
  const std::optional<ElementDtype> rotary =
      cuda_element_dtype(tables ? angles.cos.scalar_type() : angles.dtype, false);
  const bool norms_agree =
      !heads.q_norm.defined() || !heads.k_norm.defined() || heads.q_norm.scalar_type() == heads.k_norm.scalar_type();
  const at::Device device = qkv.device();
  const bool on_device = key_pool.device() == device && value_pool.device() == device && positions.device() == device &&
                         slot_mapping.device() == device && (!norm.defined() || norm.device() == device) &&
                         (tables ? angles.cos.device() == device && angles.sin.device() == device
                                 : angles.inv_freq.defined() && angles.inv_freq.device() == device);
  const bool layouts = qkv.stride(1) == 1 && key_pool.is_contiguous() && value_pool.is_contiguous() &&
                       value_pool.scalar_type() == key_pool.scalar_type() && positions.is_contiguous() &&
                       slot_mapping.is_contiguous() && (!norm.defined() || norm.is_contiguous());
  const bool rotation = tables ? angles.cos.is_contiguous() && angles.sin.is_contiguous() &&
                                     angles.sin.scalar_type() == angles.cos.scalar_type()
                               : angles.inv_freq.defined() && angles.inv_freq.scalar_type() == at::kFloat;
  if (!activations || !pools || !norms || !rotary || !norms_agree || !on_device || !layouts || !rotation) {
    return {};
  }
  const OpTimer timer(ProfiledOp::AttentionInputs, qkv.size(0));
  at::Tensor q = at::empty({qkv.size(0), heads.heads, heads.head_dim}, qkv.options());
  AttentionInputsCudaArgs args;
  args.shape = {qkv.size(0), heads.heads, heads.kv_heads, heads.head_dim, qkv.stride(0)};
  args.qkv = qkv.data_ptr();
  args.q_out = q.data_ptr();
  args.activations = *activations;
  args.key_pool = key_pool.data_ptr();
  args.value_pool = value_pool.data_ptr();
  args.pools = *pools;
  args.slots = slot_mapping.data_ptr<int64_t>();
  args.positions = positions.data_ptr<int64_t>();
  args.q_norm = heads.q_norm.defined() ? heads.q_norm.data_ptr() : nullptr;
  args.k_norm = heads.k_norm.defined() ? heads.k_norm.data_ptr() : nullptr;
  args.norms = *norms;
  args.eps = static_cast<float>(heads.norm_eps);
  if (tables) {
    args.cos = angles.cos.data_ptr();
    args.sin = angles.sin.data_ptr();
  } else {
    args.inv_freq = angles.inv_freq.data_ptr<float>();
  }
  args.angles = *rotary;
  attention_inputs_cuda(args, current_cuda_stream());
  return q;
}
#endif

}  // namespace

at::Tensor attention_inputs(const Backend& backend, const at::Tensor& qkv, const AttentionHeads& heads,
                            const RopeAngles& angles, const at::Tensor& positions, const at::Tensor& slot_mapping,
                            at::Tensor& key_pool, at::Tensor& value_pool) {
  const int64_t T = qkv.size(0), H = heads.heads, KVH = heads.kv_heads, D = heads.head_dim;
  const at::ScalarType pool_type = key_pool.scalar_type();
  const bool fused_pools = value_pool.scalar_type() == pool_type &&
                           (pool_type == at::kFloat || pool_type == at::kBFloat16) && key_pool.is_contiguous() &&
                           value_pool.is_contiguous();
  if (backend.cpu_kernels() && qkv.is_cpu() && qkv.scalar_type() == at::kFloat && qkv.stride(1) == 1 &&
      angles.float32_tables() && float32_or_absent(heads.q_norm) && float32_or_absent(heads.k_norm) && fused_pools) {
    const OpTimer timer(ProfiledOp::AttentionInputs, T);
    at::Tensor q = at::empty({T, H, D}, qkv.options());
    const AttentionInputsShape shape{T, H, KVH, D, qkv.stride(0)};
    AttentionInputsParams params;
    params.q_norm = data_or_null(heads.q_norm);
    params.k_norm = data_or_null(heads.k_norm);
    params.eps = static_cast<float>(heads.norm_eps);
    params.positions = positions.data_ptr<int64_t>();
    params.cos = angles.cos.data_ptr<float>();
    params.sin = angles.sin.data_ptr<float>();
    params.slots = slot_mapping.data_ptr<int64_t>();
    if (pool_type == at::kFloat) {
      attention_inputs_cpu(qkv.data_ptr<float>(), shape, params, q.data_ptr<float>(), key_pool.data_ptr<float>(),
                           value_pool.data_ptr<float>());
    } else {
      attention_inputs_cpu(qkv.data_ptr<float>(), shape, params, q.data_ptr<float>(),
                           static_cast<uint16_t*>(key_pool.data_ptr()), static_cast<uint16_t*>(value_pool.data_ptr()));
    }
    return q;
  }
#if IZWI_WITH_CUDA
  if (backend.cuda_kernels() && qkv.is_cuda()) {
    at::Tensor q = attention_inputs_on_device(qkv, heads, angles, positions, slot_mapping, key_pool, value_pool);
    if (q.defined()) return q;
  }
#endif
  at::Tensor q = qkv.narrow(1, 0, H * D).view({T, H, D});
  at::Tensor k = qkv.narrow(1, H * D, KVH * D).view({T, KVH, D});
  const at::Tensor v = qkv.narrow(1, (H + KVH) * D, KVH * D).view({T, KVH, D});
  if (heads.q_norm.defined()) q = rms_norm(backend, q, heads.q_norm, heads.norm_eps);
  if (heads.k_norm.defined()) k = rms_norm(backend, k, heads.k_norm, heads.norm_eps);
  q = rope(backend, q, positions, angles);
  k = rope(backend, k, positions, angles);
  key_pool.view({-1, KVH, D}).index_copy_(0, slot_mapping, k.to(pool_type));
  value_pool.view({-1, KVH, D}).index_copy_(0, slot_mapping, v.to(pool_type));
  return q;
}

}  // namespace izwi::ops
