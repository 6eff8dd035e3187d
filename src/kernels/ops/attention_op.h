#pragma once
// The dense-attention dispatch point: the encoders' and the codec's attention over K/V they hold
// themselves (a whole utterance, a sliding window, a frame's codebook steps), as opposed to the
// decoders' paged attention (paged_attention_op.h).

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/backend.h"

namespace izwi::ops {

/// Which keys each query sees and how its scores are formed. Query i stands at key index
/// i + (Lk - Lq): the queries are the last Lq of the keys (a kept cache, then the new frames), as
/// flash attention aligns them; with Lq == Lk query i stands at key i.
struct AttentionOptions {
  /// Multiplies q.k; 0 = 1 / sqrt(head_dim).
  double scale = 0.0;
  /// Keys more than this many before the query's index are hidden; -1 = none hidden.
  int64_t window_left = -1;
  /// Keys more than this many after the query's index are hidden; -1 = none hidden, 0 = causal.
  int64_t window_right = -1;
  /// int64 [B] on q's device: keys before index first_key[b] of batch row b are hidden (a
  /// zero-filled cache before a stream's start). Undefined = none hidden.
  at::Tensor first_key;
  /// Added to the scaled scores before the softmax (as scaled_dot_product_attention's float mask),
  /// broadcastable to [B, Hq, Lq, Lk]: a relative-position term the caller computes (Transformer-XL's
  /// rel_shift, ALiBi, T5). Undefined = none.
  at::Tensor bias;

  /// Causal attention; with window > 0 a query sees itself and the window - 1 keys before it.
  static AttentionOptions causal(int64_t window = 0) {
    AttentionOptions options;
    options.window_right = 0;
    options.window_left = window > 0 ? window - 1 : -1;
    return options;
  }
};

/// softmax(scale * q k^T + bias, hidden keys -inf) v. q [B, Hq, Lq, D], k [B, Hkv, Lk, D],
/// v [B, Hkv, Lk, Dv] (any strides; Hq a multiple of Hkv: query head h reads K/V head
/// h / (Hq / Hkv), with no copy of K/V) -> [B, Hq, Lq, Dv] in v's dtype. Scores and softmax in
/// float32 for float32, bf16 and f16 inputs (float64 for float64); a query whose keys are all hidden gets NaN. Every
/// backend: libtorch's batched products (cuBLAS on CUDA), the softmax over the scores in float32.
at::Tensor attention(const Backend& backend, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const AttentionOptions& options = {});

}  // namespace izwi::ops
