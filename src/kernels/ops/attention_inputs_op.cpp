#include "kernels/ops/attention_inputs_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/attention_inputs_cpu.h"
#include "kernels/ops/rms_norm_op.h"

namespace izwi::ops {

namespace {

bool float32_or_absent(const at::Tensor& t) { return !t.defined() || t.scalar_type() == at::kFloat; }

const float* data_or_null(const at::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

}  // namespace

at::Tensor attention_inputs(KernelBackend backend, const at::Tensor& qkv, const AttentionHeads& heads,
                            const RopeAngles& angles, const at::Tensor& positions, const at::Tensor& slot_mapping,
                            at::Tensor& key_pool, at::Tensor& value_pool) {
  const int64_t T = qkv.size(0), H = heads.heads, KVH = heads.kv_heads, D = heads.head_dim;
  const at::ScalarType pool_type = key_pool.scalar_type();
  const bool fused_pools = value_pool.scalar_type() == pool_type &&
                           (pool_type == at::kFloat || pool_type == at::kBFloat16) && key_pool.is_contiguous() &&
                           value_pool.is_contiguous();
  if (backend == KernelBackend::Cpu && qkv.is_cpu() && qkv.scalar_type() == at::kFloat && qkv.stride(1) == 1 &&
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
