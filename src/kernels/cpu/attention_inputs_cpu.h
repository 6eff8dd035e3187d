#pragma once
// Everything between a layer's QKV projection and its attention, as one pass over the projection's
// rows: the per-head RMSNorm of q and k (Qwen3, LFM2), RoPE at each token's position, and the
// writes of K and V into the paged pools. Separately these were six ops, each a pass over memory
// and most a fork/join of their own, with two copies to make the strided heads contiguous.

#include <cstdint>

namespace izwi {

struct AttentionInputsShape {
  int64_t tokens = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t qkv_stride = 0;  ///< floats from one token's projection row to the next's
};

/// What normalises and rotates the heads. q_norm and k_norm [head_dim] may be null (no per-head
/// norm); cos / sin are the rotary tables [max_positions, head_dim / 2].
struct AttentionInputsParams {
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float eps = 0.0f;
  const int64_t* positions = nullptr;  ///< [tokens]
  const float* cos = nullptr;
  const float* sin = nullptr;
  const int64_t* slots = nullptr;  ///< [tokens]: where each token's K and V go in the pools
};

/// qkv [tokens, (heads + 2 kv_heads) * head_dim] (q heads, then k, then v): writes the normed and
/// rotated q heads to q_out [tokens, heads, head_dim], the normed and rotated k heads to
/// key_pool[slots[t]] and the v heads to value_pool[slots[t]] (pools [slots, kv_heads, head_dim]).
/// bf16 pools (uint16_t bits) get the values rounded to nearest even, as .to(kBFloat16) rounds.
void attention_inputs_cpu(const float* qkv, const AttentionInputsShape& shape, const AttentionInputsParams& params,
                          float* q_out, float* key_pool, float* value_pool);
void attention_inputs_cpu(const float* qkv, const AttentionInputsShape& shape, const AttentionInputsParams& params,
                          float* q_out, uint16_t* key_pool, uint16_t* value_pool);

}  // namespace izwi
