#pragma once
// attention_inputs_cpu on the GPU: between a layer's QKV projection and its attention, the
// per-head RMSNorm of q and k (Qwen3, LFM2; optional), RoPE at each token's position and the
// writes of K and V into the paged pools, in one launch instead of six ops.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/attention_inputs_cpu.h"
#include "kernels/cuda/element_dtype.h"

namespace izwi {

struct AttentionInputsCudaArgs {
  /// tokens, heads, kv_heads, head_dim, and qkv_stride: elements from one token's row to the next.
  AttentionInputsShape shape;
  const void* qkv = nullptr;                         ///< [tokens, qkv_stride] of `activations`: q heads, then k, then v
  void* q_out = nullptr;                             ///< [tokens, heads, head_dim] of `activations`
  ElementDtype activations = ElementDtype::Float32;  ///< Float32 or BFloat16
  /// [slots, kv_heads, head_dim] of `pools` (Float32, BFloat16 or Float16), as paged attention reads
  /// them; token t's K and V go to slot slots[t], which must lie in the pools.
  void* key_pool = nullptr;
  void* value_pool = nullptr;
  ElementDtype pools = ElementDtype::Float32;
  const int64_t* slots = nullptr;      ///< [tokens]
  const int64_t* positions = nullptr;  ///< [tokens]
  /// Per-head RMSNorm weights [head_dim] of `norms` (Float32 or BFloat16); null: no norm.
  const void* q_norm = nullptr;
  const void* k_norm = nullptr;
  ElementDtype norms = ElementDtype::Float32;
  float eps = 0.0f;
  /// The rotary tables [max_positions, head_dim / 2] of `angles` (Float32 or BFloat16); when null,
  /// the angles float(positions[t]) * inv_freq[i] (float32), rounded to `angles` as tables would be.
  const void* cos = nullptr;
  const void* sin = nullptr;
  const float* inv_freq = nullptr;
  ElementDtype angles = ElementDtype::Float32;
};

/// q_out = rope(norm(q)), key_pool[slots[t]] = rope(norm(k)), value_pool[slots[t]] = v, with float32
/// math and each stored element rounded once to its destination's type (the normed head is not
/// rounded before it is rotated).
void attention_inputs_cuda(const AttentionInputsCudaArgs& args, cudaStream_t stream);

}  // namespace izwi
