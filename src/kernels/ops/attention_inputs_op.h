#pragma once
// The dispatch point between a layer's QKV projection and its attention: split the projection into
// heads, norm q and k per head where the model does (Qwen3, LFM2), rotate them, and write K and V
// to the paged pools.

#include <ATen/ATen.h>

#include "kernels/backend.h"
#include "kernels/ops/rope_op.h"

namespace izwi::ops {

struct AttentionHeads {
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  /// Per-head RMSNorm weights [head_dim]; undefined when the model has none.
  at::Tensor q_norm;
  at::Tensor k_norm;
  double norm_eps = 0.0;
};

/// qkv [T, (heads + 2 kv_heads) * head_dim], the projection's output (q heads, then k, then v):
/// writes each token's K and V to key_pool / value_pool [blocks, block_size, kv_heads, head_dim]
/// at slot_mapping[t] (int64, block * block_size + offset), K normed and rotated at positions[t],
/// and returns q [T, heads, head_dim], normed and rotated. Cpu: one fused pass (AttentionInputs in
/// the op profile) for float32 qkv, norms and tables and float32 or bf16 pools; Cuda: one kernel
/// for float32 or bf16 qkv, norms and tables (or float32 inv_freq) and float32, bf16 or f16 pools;
/// otherwise the rms_norm and rope dispatch points and libtorch's index_copy_.
at::Tensor attention_inputs(const Backend& backend, const at::Tensor& qkv, const AttentionHeads& heads,
                            const RopeAngles& angles, const at::Tensor& positions, const at::Tensor& slot_mapping,
                            at::Tensor& key_pool, at::Tensor& value_pool);

}  // namespace izwi::ops
