// ops::attention (the encoders' and the codec's dense attention) against a naive float64
// reference that walks every query, key and head: every combination of window, bias, per-row
// first key, grouped K/V heads, scale, query count and layout, in float32, bf16 and float64.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <vector>

#include "izwi/errors.h"
#include "kernels/ops/attention_op.h"

namespace izwi {
namespace {

using ops::AttentionOptions;

// Whether query i (of `queries`, standing at key index i + keys - queries) sees key j of row b.
bool visible(const AttentionOptions& o, int64_t b, int64_t i, int64_t j, int64_t queries, int64_t keys) {
  const int64_t offset = j - (i + keys - queries);
  if (o.window_left >= 0 && offset < -o.window_left) return false;
  if (o.window_right >= 0 && offset > o.window_right) return false;
  return !o.first_key.defined() || j >= o.first_key[b].item<int64_t>();
}

// One loop per query head, in float64, with the mask built key by key.
at::Tensor naive_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionOptions& o) {
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), keys = k.size(2);
  const int64_t group = heads / k.size(1);
  const double scale = o.scale > 0 ? o.scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  const at::Tensor bias =
      o.bias.defined() ? o.bias.to(at::kDouble).expand({batch, heads, queries, keys}) : at::Tensor();
  at::Tensor out = at::zeros({batch, heads, queries, v.size(3)}, at::kDouble);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor kh = k[b][h / group].to(at::kDouble), vh = v[b][h / group].to(at::kDouble);
      at::Tensor scores = at::matmul(q[b][h].to(at::kDouble), kh.t()) * scale;
      if (bias.defined()) scores = scores + bias[b][h];
      for (int64_t i = 0; i < queries; ++i) {
        for (int64_t j = 0; j < keys; ++j) {
          if (!visible(o, b, i, j, queries, keys)) scores[i][j] = -std::numeric_limits<double>::infinity();
        }
      }
      out[b][h] = at::matmul(at::softmax(scores, -1), vh);
    }
  }
  return out;
}

struct Window {
  int64_t left, right;
};

struct Shape {
  int64_t heads, kv_heads, queries, keys;
};

TEST(AttentionOp, EveryOptionCombinationMatchesTheNaiveReference) {
  at::manual_seed(11);
  const int64_t batch = 2, head_dim = 16;
  // None, causal, causal windows, a two-sided window (FastConformer's limited context), one side.
  const std::vector<Window> windows{{-1, -1}, {-1, 0}, {2, 0}, {0, 0}, {2, 1}, {3, -1}, {-1, 2}};
  const std::vector<Shape> shapes{{4, 4, 6, 6}, {4, 2, 5, 9}, {6, 1, 3, 8}, {4, 4, 1, 7}};
  int cases = 0;
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kDouble}) {
    for (const Shape& s : shapes) {
      // q as [B, Lq, Hq, D] transposed (the projections' layout), k and v contiguous.
      const at::Tensor q = at::randn({batch, s.queries, s.heads, head_dim}).to(dtype).transpose(1, 2);
      const at::Tensor k = at::randn({batch, s.kv_heads, s.keys, head_dim}).to(dtype);
      const at::Tensor v = at::randn({batch, s.kv_heads, s.keys, head_dim + 4}).to(dtype);
      for (const Window& w : windows) {
        for (int bias_kind = 0; bias_kind < 3; ++bias_kind) {
          for (const bool first_key : {false, true}) {
            for (const double scale : {0.0, 0.3}) {
              AttentionOptions o;
              o.window_left = w.left;
              o.window_right = w.right;
              o.scale = scale;
              // Per head and row; shared by every head; broadcast over the batch.
              if (bias_kind == 1) o.bias = at::randn({batch, s.heads, s.queries, s.keys});
              if (bias_kind == 2) o.bias = at::randn({batch, 1, s.queries, s.keys});
              // Keys before a stream's start, kept so every query still sees its own key.
              if (first_key) o.first_key = at::tensor({int64_t{0}, std::min<int64_t>(2, s.keys - s.queries)});
              const at::Tensor want = naive_attention(q, k, v, o);
              const at::Tensor got = ops::attention(Backend::host(), q, k, v, o);
              ASSERT_EQ(got.sizes(), want.sizes());
              ASSERT_EQ(got.scalar_type(), dtype);
              // bf16: the probabilities and the output are rounded to bf16 (8 bits of mantissa);
              // float64 inputs keep float64 scores (the codecs' double-precision streaming checks).
              const double tolerance = dtype == at::kBFloat16 ? 3e-2 : dtype == at::kFloat ? 2e-5 : 1e-12;
              EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), tolerance)
                  << "dtype " << at::toString(dtype) << " heads " << s.heads << "/" << s.kv_heads << " q " << s.queries
                  << " k " << s.keys << " window " << w.left << "," << w.right << " bias " << bias_kind << " first_key "
                  << first_key << " scale " << scale;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 4 * 7 * 3 * 2 * 2);
}

TEST(AttentionOp, CausalHelperIsAWindowEndingAtTheQuery) {
  const AttentionOptions causal = AttentionOptions::causal();
  EXPECT_EQ(causal.window_left, -1);
  EXPECT_EQ(causal.window_right, 0);
  const AttentionOptions windowed = AttentionOptions::causal(72);
  EXPECT_EQ(windowed.window_left, 71);  // itself and the 71 keys before it
  EXPECT_EQ(windowed.window_right, 0);
}

TEST(AttentionOp, GroupedHeadsEqualRepeatedKeyValueHeads) {
  at::manual_seed(12);
  const at::Tensor q = at::randn({1, 8, 5, 32}), k = at::randn({1, 2, 5, 32}), v = at::randn({1, 2, 5, 32});
  const AttentionOptions causal = AttentionOptions::causal();
  const at::Tensor grouped = ops::attention(Backend::host(), q, k, v, causal);
  const at::Tensor repeated =
      ops::attention(Backend::host(), q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), causal);
  EXPECT_LT((grouped - repeated).abs().max().item<double>(), 1e-6);
}

TEST(AttentionOp, AQueryWithEveryKeyHiddenIsNaN) {
  const at::Tensor x = at::randn({1, 1, 3, 8});
  AttentionOptions o = AttentionOptions::causal();
  o.first_key = at::tensor({int64_t{1}});  // query 0 sees only key 0, which is hidden
  const at::Tensor out = ops::attention(Backend::host(), x, x, x, o);
  EXPECT_TRUE(at::isnan(out[0][0][0]).all().item<bool>());
  EXPECT_TRUE(at::isfinite(out[0][0].narrow(0, 1, 2)).all().item<bool>());
}

TEST(AttentionOp, MismatchedShapesAreInternalErrors) {
  const at::Tensor q = at::randn({1, 3, 4, 8}), kv = at::randn({1, 2, 4, 8});
  EXPECT_THROW(ops::attention(Backend::host(), q, kv, kv), Error);  // 3 heads over 2 K/V heads
  EXPECT_THROW(ops::attention(Backend::host(), q, at::randn({1, 3, 4, 6}), at::randn({1, 3, 4, 8})), Error);
  AttentionOptions causal = AttentionOptions::causal();
  EXPECT_THROW(ops::attention(Backend::host(), at::randn({1, 1, 5, 8}), at::randn({1, 1, 4, 8}),
                              at::randn({1, 1, 4, 8}), causal),
               Error);  // fewer keys than queries under a window
}

}  // namespace
}  // namespace izwi
