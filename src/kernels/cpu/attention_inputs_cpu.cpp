#include "kernels/cpu/attention_inputs_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"

namespace izwi {

namespace {

inline void store(const float* src, float* dst, int64_t n) { std::copy_n(src, n, dst); }
inline void store(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

// One head of q or k: normed (when `norm` is set) into `out`, then rotated there.
void norm_and_rotate(const float* head, const float* norm, const AttentionInputsParams& p, int64_t token,
                     int64_t head_dim, float* out) {
  if (norm != nullptr) {
    rms_norm_row(head, norm, out, head_dim, p.eps);
  } else {
    std::copy_n(head, head_dim, out);
  }
  const int64_t half = head_dim / 2, position = p.positions[token];
  rope_row(out, p.cos + position * half, p.sin + position * half, half);
}

template <typename KV>
void attention_inputs(const float* qkv, const AttentionInputsShape& shape, const AttentionInputsParams& p, float* q_out,
                      KV* key_pool, KV* value_pool) {
  const int64_t H = shape.heads, KVH = shape.kv_heads, D = shape.head_dim;
  const int64_t heads_per_token = H + 2 * KVH;
  // A grain of a few tokens' heads: one decode token (a few dozen heads of 128) stays on the
  // calling thread, where a fork/join would cost more than the work.
  at::parallel_for(0, shape.tokens * heads_per_token, 256, [&](int64_t begin, int64_t end) {
    // Only bf16 keys are rotated on the side before rounding; float32 ones in their slot.
    std::vector<float> scratch(std::is_same_v<KV, float> ? 0 : static_cast<size_t>(D));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t t = row / heads_per_token, j = row % heads_per_token;
      const float* head = qkv + t * shape.qkv_stride + j * D;
      if (j < H) {
        norm_and_rotate(head, p.q_norm, p, t, D, q_out + (t * H + j) * D);
        continue;
      }
      const bool is_key = j < H + KVH;
      const int64_t kv_head = is_key ? j - H : j - H - KVH;
      KV* dst = (is_key ? key_pool : value_pool) + (p.slots[t] * KVH + kv_head) * D;
      if (!is_key) {
        store(head, dst, D);
      } else if constexpr (std::is_same_v<KV, float>) {
        norm_and_rotate(head, p.k_norm, p, t, D, dst);
      } else {
        norm_and_rotate(head, p.k_norm, p, t, D, scratch.data());
        store(scratch.data(), dst, D);
      }
    }
  });
}

}  // namespace

void attention_inputs_cpu(const float* qkv, const AttentionInputsShape& shape, const AttentionInputsParams& params,
                          float* q_out, float* key_pool, float* value_pool) {
  attention_inputs(qkv, shape, params, q_out, key_pool, value_pool);
}

void attention_inputs_cpu(const float* qkv, const AttentionInputsShape& shape, const AttentionInputsParams& params,
                          float* q_out, uint16_t* key_pool, uint16_t* value_pool) {
  attention_inputs(qkv, shape, params, q_out, key_pool, value_pool);
}

}  // namespace izwi
