// The CPU kernels against plain libtorch on odd shapes, both weight formats and both the
// GEMV (decode) and GEMM (prefill) regimes.

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/reference.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/paged_attention_cpu.h"
#include "kernels/cpu/panel_linear_cpu.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"
#include "kernels/cpu/snake_beta_cpu.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

TEST(CpuKernels, LinearMatchesLibtorchForF32AndBf16Weights) {
  at::manual_seed(0);
  for (int64_t tokens : {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 40}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{64, 96}, {67, 33}, {300, 129}, {16, 6}, {40, 1}}) {
      const at::Tensor x = at::randn({tokens, in});
      const at::Tensor w = at::randn({out, in}) * 0.1;
      const at::Tensor b = at::randn({out});
      for (bool bf16 : {false, true}) {
        const at::Tensor stored = bf16 ? w.to(at::kBFloat16) : w;
        const at::Tensor expected = at::linear(x, stored.to(at::kFloat), b);
        at::Tensor y = at::empty({tokens, out});
        linear_cpu(x.data_ptr<float>(), tokens, in, stored.data_ptr(), bf16 ? WeightFormat::BF16 : WeightFormat::F32,
                   out, b.data_ptr<float>(), y.data_ptr<float>());
        EXPECT_LT(max_abs_diff(y, expected), 1e-4)
            << "tokens " << tokens << " in " << in << " out " << out << (bf16 ? " bf16" : " f32");
      }
    }
  }
}

// Every variant this CPU runs (AVX-512 with and without avx512_bf16, AVX2, portable), across token counts that fill one
// tile, several tiles and a ragged last one (and, from 64 per thread, blocks of tokens per thread), input widths below,
// at and past one depth pass (256), and output widths that leave a padded panel.
TEST(CpuKernels, PackedLinearMatchesLibtorchForEveryKernelVariant) {
  at::manual_seed(0);
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    for (int64_t tokens : {1, 2, 5, 14, 15, 16, 29, 64, 130, 301}) {
      for (auto [in, out] : {std::pair<int64_t, int64_t>{64, 96}, {67, 33}, {600, 129}, {16, 6}, {257, 1}}) {
        const at::Tensor x = at::randn({tokens, in});
        const at::Tensor w = at::randn({out, in}) * 0.1;
        const at::Tensor b = at::randn({out});
        for (bool bf16 : {false, true}) {
          const at::Tensor stored = bf16 ? w.to(at::kBFloat16) : w;
          const WeightFormat format = bf16 ? WeightFormat::BF16 : WeightFormat::F32;
          at::Tensor packed = at::empty({packed_elements(out, in, format, *kernels)}, stored.options());
          pack_panels(stored.data_ptr(), format, out, in, packed.data_ptr(), *kernels);
          const std::string where = std::string(kernels->name) + " tokens " + std::to_string(tokens) + " in " +
                                    std::to_string(in) + " out " + std::to_string(out) + (bf16 ? " bf16" : " f32");
          // The avx512_bf16 variant rounds the inputs of bf16 weights to bf16; the products are then
          // exact in float32 and only the order of the sums differs.
          const bool rounds_inputs = bf16 && kernels->bf16_group == 2;
          const at::Tensor x_used = rounds_inputs ? x.to(at::kBFloat16).to(at::kFloat) : x;
          for (bool with_bias : {false, true}) {
            const at::Tensor expected = at::linear(x_used, stored.to(at::kFloat), with_bias ? b : at::Tensor());
            at::Tensor y = at::empty({tokens, out});
            linear_packed_cpu(x.data_ptr<float>(), tokens, in, packed.data_ptr(), format, out,
                              with_bias ? b.data_ptr<float>() : nullptr, y.data_ptr<float>(), *kernels);
            EXPECT_LT(max_abs_diff(y, expected), 1e-4) << where;
          }
          const at::Tensor ids = at::tensor(std::vector<int64_t>{out - 1, 0, out / 2});
          at::Tensor rows = at::empty({3, in});
          gather_packed_rows(packed.data_ptr(), format, in, ids.data_ptr<int64_t>(), 3, rows.data_ptr<float>(),
                             *kernels);
          EXPECT_TRUE(at::equal(rows, stored.index_select(0, ids).to(at::kFloat))) << where;
        }
      }
    }
  }
}

// Every variant's arrangement of row-major inputs, bit for bit: tile i of n tokens from t0 * in on,
// float (k, t) at k * n + t; for the avx512_bf16 variant's bf16 weights the word (p, t) at p * n + t
// holding columns 2p and 2p + 1 rounded as float_to_bf16 rounds (ties, NaN, infinities, subnormals,
// an odd last column paired with zero). Rows sit `stride` floats apart, wider than `in`.
TEST(CpuKernels, PackInputsArrangesEveryTileBitForBit) {
  at::manual_seed(1);
  const std::vector<float> special = {0.0f,        -0.0f,  INFINITY, -INFINITY, NAN, 1e-40f, -3e-39f,
                                      1.00390625f,  // exactly between two bf16 values: rounds to even
                                      1.01171875f, 3.4e38f};
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    for (int64_t tokens : {1, 5, 14, 16, 29}) {
      for (int64_t in : {1, 2, 15, 16, 17, 33, 67}) {
        const int64_t stride = in + 3;
        at::Tensor rows = at::randn({tokens, stride});
        float* data = rows.data_ptr<float>();
        for (size_t i = 0; i < special.size() && static_cast<int64_t>(i) < tokens * stride; ++i) {
          data[(static_cast<int64_t>(i) * 7) % (tokens * stride)] = special[i];
        }
        for (WeightFormat format : {WeightFormat::F32, WeightFormat::BF16}) {
          const bool pairs = format == WeightFormat::BF16 && kernels->bf16_group == 2;
          std::vector<float> packed(static_cast<size_t>(tokens * in + 1), -1.0f);
          const int64_t tiles = tile_count(tokens, kernels->max_tile_tokens);
          // One tile at a time, last first: a tile that wrote past its own room would spoil the
          // tile after it, as threads packing neighbouring tiles at once would.
          for (int64_t i = tiles - 1; i >= 0; --i) {
            kernels->pack_inputs(PanelInputs{data, stride, nullptr}, tokens, in, format, packed.data(), i, i + 1);
          }
          const std::string where = std::string(kernels->name) + " tokens " + std::to_string(tokens) + " in " +
                                    std::to_string(in) + (format == WeightFormat::BF16 ? " bf16" : " f32");
          for (int64_t i = 0; i < tiles; ++i) {
            const int64_t t0 = tile_start(tokens, tiles, i), n = tile_start(tokens, tiles, i + 1) - t0;
            const float* tile = packed.data() + t0 * in;
            for (int64_t t = 0; t < n; ++t) {
              const float* row = data + (t0 + t) * stride;
              for (int64_t k = 0; k < in; k += pairs ? 2 : 1) {
                uint32_t expected, got;
                if (pairs) {
                  expected = float_to_bf16(row[k]) | (k + 1 < in ? uint32_t{float_to_bf16(row[k + 1])} << 16 : 0u);
                  std::memcpy(&got, tile + (k / 2) * n + t, sizeof(got));
                } else {
                  std::memcpy(&expected, row + k, sizeof(expected));
                  std::memcpy(&got, tile + k * n + t, sizeof(got));
                }
                ASSERT_EQ(got, expected) << where << " token " << t0 + t << " column " << k;
              }
            }
          }
          EXPECT_EQ(packed.back(), -1.0f) << where << ": wrote past the arrangement";
        }
      }
    }
  }
}

// A convolution's product as the codec runs it: inputs read in place from a channels-first
// [channels, length] signal through column offsets (column c * taps + j at c * length + j *
// dilation), outputs written channels-first. It must equal, bit for bit, the row-major product of
// the same inputs copied out (im2col), for every variant, both weight formats, few and many tokens
// (the latter in blocks of tokens over weights that stay cached, and split across threads).
TEST(CpuKernels, PackedLinearReadsStridedInputsAndWritesChannelsFirst) {
  at::manual_seed(3);
  const int64_t channels = 37, taps = 3, dilation = 2, in = channels * taps;
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    for (int64_t tokens : {1, 13, 64, 300, 2000}) {
      for (int64_t out : {5, 70}) {
        const int64_t length = tokens + (taps - 1) * dilation;
        const at::Tensor signal = at::randn({channels, length});
        const at::Tensor w = at::randn({out, in}) * 0.1;
        const at::Tensor b = at::randn({out});
        const at::Tensor columns =
            signal.as_strided({tokens, channels, taps}, {1, length, dilation}).reshape({tokens, in}).contiguous();
        std::vector<int64_t> offsets(static_cast<size_t>(in));
        for (int64_t c = 0; c < channels; ++c) {
          for (int64_t j = 0; j < taps; ++j) offsets[c * taps + j] = c * length + j * dilation;
        }
        for (bool bf16 : {false, true}) {
          const at::Tensor stored = bf16 ? w.to(at::kBFloat16) : w;
          const WeightFormat format = bf16 ? WeightFormat::BF16 : WeightFormat::F32;
          at::Tensor packed = at::empty({packed_elements(out, in, format, *kernels)}, stored.options());
          pack_panels(stored.data_ptr(), format, out, in, packed.data_ptr(), *kernels);
          at::Tensor row_major = at::empty({tokens, out});
          linear_packed_cpu(columns.data_ptr<float>(), tokens, in, packed.data_ptr(), format, out, b.data_ptr<float>(),
                            row_major.data_ptr<float>(), *kernels);
          at::Tensor channels_first = at::empty({out, tokens});
          linear_packed_cpu(PanelInputs{signal.data_ptr<float>(), 1, offsets.data()}, tokens, in, packed.data_ptr(),
                            format, out, b.data_ptr<float>(), PanelOutputs{channels_first.data_ptr<float>(), 1, tokens},
                            *kernels);
          const std::string where = std::string(kernels->name) + " tokens " + std::to_string(tokens) + " out " +
                                    std::to_string(out) + (bf16 ? " bf16" : " f32");
          EXPECT_TRUE(at::equal(channels_first, row_major.t())) << where;
          const at::Tensor x_used =
              bf16 && kernels->bf16_group == 2 ? columns.to(at::kBFloat16).to(at::kFloat) : columns;
          EXPECT_LT(max_abs_diff(row_major, at::linear(x_used, stored.to(at::kFloat), b)), 1e-4) << where;
        }
      }
    }
  }
}

// SiLU-mul runs a vector exp where the library is built for a vector unit: within a few ulp of
// libm's across the whole float range, the clamped ends included (SiLU of a large negative gate is
// a signed zero-sized value, of a large positive one the gate itself).
TEST(CpuKernels, SiluMulMatchesLibmAcrossTheRange) {
  std::vector<float> gate;
  for (float x = -120.0f; x <= 120.0f; x += 0.0173f) gate.push_back(x);
  const int64_t width = static_cast<int64_t>(gate.size());
  std::vector<float> gate_up(gate);
  gate_up.resize(2 * gate.size(), 1.0f);  // up = 1
  std::vector<float> out(gate.size());
  silu_mul_cpu(gate_up.data(), out.data(), 1, width);
  for (int64_t i = 0; i < width; ++i) {
    const double g = gate[static_cast<size_t>(i)], want = g / (1.0 + std::exp(-g));
    EXPECT_LE(std::abs(out[static_cast<size_t>(i)] - want), 1e-6 * std::abs(want) + 1e-35) << "gate " << g;
  }
}

// SnakeBeta's vector sine: within a few ulp of a double-precision reference over the range a codec
// produces and past the vector path's limit (where libm takes over), and the same bits for a
// sample whatever its place in a row (a vector or a short tail), as exact streaming needs.
TEST(CpuKernels, SnakeBetaMatchesDoublePrecisionAndIsTheSameInAnyChunk) {
  std::vector<float> x;
  for (float v = -300.0f; v <= 300.0f; v += 0.0137f) x.push_back(v);
  for (float v : {1e5f, -2.5e5f, 7e4f, 0.0f, -0.0f, 1e-30f}) x.push_back(v);
  const int64_t length = static_cast<int64_t>(x.size());
  const std::vector<float> alpha = {0.5f, 3.25f}, inv_beta = {2.0f, 0.125f};
  const int64_t padding = 5, out_stride = length + padding;
  std::vector<float> out(static_cast<size_t>(2 * out_stride), -1.0f);
  std::vector<float> rows(x);
  rows.insert(rows.end(), x.begin(), x.end());
  snake_beta_cpu(rows.data(), alpha.data(), inv_beta.data(), out.data(), 2, 2, length, out_stride);
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < length; ++i) {
      const double v = x[static_cast<size_t>(i)], s = std::sin(static_cast<double>(alpha[c]) * v);
      const double want = v + inv_beta[c] * s * s;
      const float got = out[static_cast<size_t>(c * out_stride + i)];
      ASSERT_LE(std::abs(got - want), 1e-6 * (std::abs(v) + inv_beta[c]) + 1e-37) << "x " << v << " channel " << c;
      // One sample alone goes through the padded tail: the same bits as inside a long row.
      float alone = 0.0f;
      snake_beta_cpu(&x[static_cast<size_t>(i)], &alpha[c], &inv_beta[c], &alone, 1, 1, 1, 1);
      ASSERT_EQ(alone, got) << "x " << v << " channel " << c;
    }
    for (int64_t i = length; i < out_stride; ++i) EXPECT_EQ(out[static_cast<size_t>(c * out_stride + i)], -1.0f);
  }
}

TEST(CpuKernels, RmsNormRopeAndSiluMulMatchLibtorch) {
  at::manual_seed(1);
  const at::Tensor x = at::randn({5, 3, 37});
  const at::Tensor w = at::randn({37});
  at::Tensor y = at::empty_like(x);
  rms_norm_cpu(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), 15, 37, 1e-5f);
  const at::Tensor expected = w * (x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-5));
  EXPECT_LT(max_abs_diff(y, expected), 1e-5);

  const int64_t head_dim = 8, half = 4;
  const at::Tensor cos = at::randn({20, half}), sin = at::randn({20, half});
  const at::Tensor positions = at::tensor({3, 0, 19}, at::kLong);
  at::Tensor q = at::randn({3, 2, head_dim});
  const at::Tensor c = cos.index_select(0, positions).unsqueeze(1), s = sin.index_select(0, positions).unsqueeze(1);
  const at::Tensor x1 = q.narrow(-1, 0, half), x2 = q.narrow(-1, half, half);
  const at::Tensor rotated = at::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
  rope_cpu(q.data_ptr<float>(), positions.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(), 3, 2,
           head_dim);
  EXPECT_LT(max_abs_diff(q, rotated), 1e-6);

  const at::Tensor gate_up = at::randn({4, 2 * 19});
  at::Tensor product = at::empty({4, 19});
  silu_mul_cpu(gate_up.data_ptr<float>(), product.data_ptr<float>(), 4, 19);
  EXPECT_LT(max_abs_diff(product, at::silu(gate_up.narrow(1, 0, 19)) * gate_up.narrow(1, 19, 19)), 1e-6);
}

}  // namespace
}  // namespace izwi

namespace izwi {
namespace {

// Paged attention on both kernel variants (vectorised head dims and any other), over float32 and
// bf16 pools, against a straightforward causal softmax attention over gathered keys (for bf16
// pools, the bf16 values widened: the kernel reads exactly those). A prefill chunk beside 2 decode
// rows, and beside 9: those many take all KV heads of a row in one work item (at least 4 per
// thread), the 2 take one head each. Groups of 1, 3 and 10 query heads per KV head: one head's
// items score up to 3 (AVX2) or 6 (AVX-512) query rows against four keys at once and accumulate
// values for up to 8, so 10 takes several passes of each, the last one short.
TEST(CpuKernels, PagedAttentionMatchesDenseCausalAttention) {
  at::manual_seed(2);
  const int threads_before = at::get_num_threads();
  for (auto [head_dim, window] : {std::pair<int64_t, int64_t>{16, 0}, {24, 0}, {64, 0}, {128, 0}, {16, 3}, {24, 5}}) {
    for (const auto [bf16, threads] : {std::pair<bool, int>{false, 1}, {true, 1}, {false, 2}, {true, 2}}) {
      for (const auto [decode_rows, group] : {std::pair<int64_t, int64_t>{2, 3}, {9, 3}, {2, 10}, {9, 1}}) {
        at::set_num_threads(threads);
        const int64_t kv_heads = 2, heads = kv_heads * group, block = 4;
        const at::Tensor stored_keys = at::randn({12, block, kv_heads, head_dim}).to(bf16 ? at::kBFloat16 : at::kFloat);
        const at::Tensor stored_values = at::randn_like(stored_keys);
        const at::Tensor key_pool = stored_keys.to(at::kFloat), value_pool = stored_values.to(at::kFloat);
        // Scattered blocks: 3 new rows after 6 cached, then the decode rows after 22, 20, .. cached
        // (more positions than the value pass takes in one chunk).
        std::vector<std::vector<int32_t>> tables = {{7, 2, 9}};
        std::vector<SeqSlice> seqs(1);
        seqs[0].offset = 0, seqs[0].length = 3, seqs[0].start_pos = 6;
        for (int64_t i = 0; i < decode_rows; ++i) {
          tables.emplace_back();
          for (int64_t b = 0; b < 6; ++b) tables.back().push_back(static_cast<int32_t>((5 * i + 7 * b + 3) % 12));
          SeqSlice decode;
          decode.offset = 3 + i, decode.length = 1, decode.start_pos = 22 - 2 * i;
          seqs.push_back(decode);
        }
        for (size_t i = 0; i < seqs.size(); ++i) seqs[i].block_table = &tables[i];
        const at::Tensor q = at::randn({3 + decode_rows, heads, head_dim});
        at::Tensor out = at::empty_like(q);
        const float scale = 0.3f;
        const PagedAttentionShape shape{heads, kv_heads, head_dim, block, window};
        if (bf16) {
          paged_attention_cpu(q.data_ptr<float>(), static_cast<const uint16_t*>(stored_keys.data_ptr()),
                              static_cast<const uint16_t*>(stored_values.data_ptr()), out.data_ptr<float>(), seqs,
                              shape, scale);
        } else {
          paged_attention_cpu(q.data_ptr<float>(), key_pool.data_ptr<float>(), value_pool.data_ptr<float>(),
                              out.data_ptr<float>(), seqs, shape, scale);
        }
        for (const SeqSlice& s : seqs) {
          const int64_t context = s.start_pos + s.length;
          std::vector<int64_t> ids(s.block_table->begin(), s.block_table->end());
          const at::Tensor idx = at::tensor(ids, at::kLong);
          const at::Tensor k = key_pool.index_select(0, idx).reshape({-1, kv_heads, head_dim});
          const at::Tensor v = value_pool.index_select(0, idx).reshape({-1, kv_heads, head_dim});
          for (int64_t r = 0; r < s.length; ++r) {
            for (int64_t h = 0; h < heads; ++h) {
              const int64_t end = s.start_pos + r + 1, first = window > 0 ? std::max<int64_t>(0, end - window) : 0;
              const at::Tensor kh = k.select(1, h / group).narrow(0, first, end - first);
              const at::Tensor vh = v.select(1, h / group).narrow(0, first, end - first);
              const at::Tensor p = at::softmax(at::mv(kh, q[s.offset + r][h]) * scale, 0);
              EXPECT_LT(max_abs_diff(out[s.offset + r][h], at::mv(vh.t(), p)), 1e-5)
                  << "head_dim " << head_dim << " window " << window << (bf16 ? " bf16" : " f32") << " threads "
                  << threads << " decode rows " << decode_rows << " group " << group << " row at " << s.offset + r
                  << " head " << h;
            }
          }
          EXPECT_LE(context, static_cast<int64_t>(s.block_table->size()) * block);
        }
      }
    }
  }
  at::set_num_threads(threads_before);
}

}  // namespace
}  // namespace izwi
