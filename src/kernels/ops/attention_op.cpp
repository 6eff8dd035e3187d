#include "kernels/ops/attention_op.h"

#include <cmath>
#include <limits>

#include "common/check.h"

namespace izwi::ops {
namespace {

// The hidden keys as one boolean mask broadcastable to [B, Hkv, group, Lq, Lk], or undefined when
// every query sees every key.
at::Tensor hidden_keys(const AttentionOptions& options, int64_t batch, int64_t queries, int64_t keys,
                       const at::Device& device) {
  at::Tensor hidden;
  if (options.window_left >= 0 || options.window_right >= 0) {
    const at::TensorOptions long_options = at::TensorOptions().dtype(at::kLong).device(device);
    // offset[i][j] = j - (i + keys - queries): where key j lies from query i.
    const at::Tensor offset = at::arange(keys, long_options).view({1, keys}) -
                              at::arange(keys - queries, keys, long_options).view({queries, 1});
    if (options.window_left >= 0) hidden = offset < -options.window_left;
    if (options.window_right >= 0) {
      const at::Tensor after = offset > options.window_right;
      hidden = hidden.defined() ? hidden.logical_or_(after) : after;
    }
  }
  if (options.first_key.defined()) {
    IZWI_CHECK(options.first_key.dim() == 1 && options.first_key.size(0) == batch,
               "attention: first_key must be [{}], one index per batch row", batch);
    const at::Tensor before =
        at::arange(keys, options.first_key.options()).view({1, keys}) < options.first_key.view({batch, 1});  // [B, Lk]
    const at::Tensor rows = before.view({batch, 1, 1, 1, keys});
    hidden = hidden.defined() ? rows.logical_or(hidden) : rows;
  }
  return hidden;
}

// A bias broadcastable to [B, Hq, Lq, Lk] as one broadcastable to [B, Hkv, group, Lq, Lk].
at::Tensor grouped_bias(const at::Tensor& bias, int64_t batch, int64_t heads, int64_t kv_heads, int64_t queries,
                        int64_t keys) {
  IZWI_CHECK(bias.dim() <= 4, "attention: bias must broadcast to [B, Hq, Lq, Lk], got {} dims", bias.dim());
  at::Tensor b = bias;
  while (b.dim() < 4) b = b.unsqueeze(0);
  if (b.size(1) == 1) return b.unsqueeze(2);  // one bias for every head: no copy
  return b.expand({batch, heads, queries, keys}).reshape({batch, kv_heads, heads / kv_heads, queries, keys});
}

}  // namespace

at::Tensor attention(const Backend& /*backend: every backend runs the libtorch path below*/, const at::Tensor& q,
                     const at::Tensor& k, const at::Tensor& v, const AttentionOptions& options) {
  IZWI_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "attention: q, k and v must be [B, heads, length, dim]");
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), head_dim = q.size(3);
  const int64_t kv_heads = k.size(1), keys = k.size(2), value_dim = v.size(3);
  IZWI_CHECK(
      k.size(0) == batch && v.size(0) == batch && v.size(1) == kv_heads && v.size(2) == keys && k.size(3) == head_dim,
      "attention: k [{}, {}, {}, {}] and v [{}, {}, {}, {}] do not match q's batch and head_dim {}", k.size(0),
      kv_heads, keys, k.size(3), v.size(0), v.size(1), v.size(2), value_dim, head_dim);
  IZWI_CHECK(kv_heads > 0 && heads % kv_heads == 0, "attention: {} query heads are not a multiple of {} K/V heads",
             heads, kv_heads);
  IZWI_CHECK(keys >= queries || (options.window_left < 0 && options.window_right < 0),
             "attention: a window needs at least as many keys ({}) as queries ({})", keys, queries);
  const int64_t group = heads / kv_heads;
  const double scale = options.scale > 0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  // A group's query heads become extra rows of their K/V head: [B, Hkv, group * Lq, D], so K and V
  // are read in place (no repeat_interleave).
  const at::Tensor grouped_q = q.reshape({batch, kv_heads, group * queries, head_dim});
  at::Tensor scores = at::matmul(grouped_q, k.transpose(2, 3)).view({batch, kv_heads, group, queries, keys});
  // Scores and softmax in float32 at least (float64 inputs keep float64).
  const at::ScalarType score_type = scores.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  scores = scores.scalar_type() == score_type ? scores.mul_(scale) : scores.to(score_type).mul_(scale);
  if (options.bias.defined()) scores.add_(grouped_bias(options.bias, batch, heads, kv_heads, queries, keys));
  const at::Tensor hidden = hidden_keys(options, batch, queries, keys, q.device());
  if (hidden.defined()) scores.masked_fill_(hidden, -std::numeric_limits<float>::infinity());
  at::Tensor probs = at::softmax(scores, -1);
  if (v.scalar_type() != score_type) probs = probs.to(v.scalar_type());
  return at::matmul(probs.view({batch, kv_heads, group * queries, keys}), v).view({batch, heads, queries, value_dim});
}

}  // namespace izwi::ops
