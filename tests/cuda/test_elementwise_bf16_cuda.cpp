// The bf16 forms of fused residual + RMSNorm, RoPE and SiLU-mul on the GPU against their CPU
// kernels (float32, on the bf16 inputs widened exactly), and the float32 forms at the odd sizes
// where the kernels fall back from 16-byte packs to element accesses. bf16 results must be within
// one bf16 ulp of the CPU result rounded to bf16 (expect_within_ulps says why one suffices).

#include <cmath>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"
#include "kernels/cuda/rms_norm_cuda.h"
#include "kernels/cuda/rope_cuda.h"
#include "kernels/cuda/silu_mul_cuda.h"

namespace izwi {
namespace {

using cuda_test::as_bf16;
using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::expect_within_ulps;
using cuda_test::from_bf16;
using cuda_test::kBf16Mantissa;
using cuda_test::random_floats;
using cuda_test::round_bf16;
using cuda_test::to_bf16;

// Row lengths: a single element, shorter than a pack, odd (rows start unaligned), a multiple of 8
// with and without an odd tail, and more elements than a block has threads times a pack.
constexpr int64_t kDims[] = {1, 7, 13, 1000, 1003, 2048, 4103};

// The norm of x rounded to bf16, or of residual + x rounded to bf16 (which residual becomes).
std::vector<float> cpu_norm(const std::vector<float>& x, const std::vector<float>& weight, int64_t rows, int64_t dim) {
  std::vector<float> y(x.size());
  rms_norm_cpu(x.data(), weight.data(), y.data(), rows, dim, 1e-6f);
  return round_bf16(y);
}

std::vector<float> rounded_sum(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> sum(a.size());
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = a[i] + b[i];
  return round_bf16(sum);
}

TEST(RmsNormBf16Cuda, MatchesCpuForEveryDimWithFloatAndBf16Weights) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 5;
  for (const int64_t dim : kDims) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const std::vector<uint16_t> x = to_bf16(random_floats(rows * dim, 10 + dim, -3.0f, 3.0f));
    const std::vector<uint16_t> residual = to_bf16(random_floats(rows * dim, 20 + dim, -3.0f, 3.0f));
    const std::vector<float> weight = round_bf16(random_floats(dim, 30 + dim, 0.5f, 1.5f));
    const std::vector<float> plain = cpu_norm(from_bf16(x), weight, rows, dim);
    const std::vector<float> sum = rounded_sum(from_bf16(x), from_bf16(residual));
    const std::vector<float> fused = cpu_norm(sum, weight, rows, dim);

    DeviceBuffer<uint16_t> d_x(x), d_y(rows * dim), d_w16(to_bf16(weight));
    DeviceBuffer<float> d_w32(weight);
    rms_norm_cuda(as_bf16(d_x.get()), nullptr, d_w32.get(), as_bf16(d_y.get()), rows, dim, 1e-6f, nullptr);
    expect_within_ulps(from_bf16(d_y.to_host()), plain, kBf16Mantissa, 1.0f, 0.0f);
    rms_norm_cuda(as_bf16(d_x.get()), nullptr, as_bf16(d_w16.get()), as_bf16(d_y.get()), rows, dim, 1e-6f, nullptr);
    expect_within_ulps(from_bf16(d_y.to_host()), plain, kBf16Mantissa, 1.0f, 0.0f);

    // The residual stream is stored rounded (one float add, then round to nearest even: exact).
    for (const bool bf16_weights : {false, true}) {
      DeviceBuffer<uint16_t> d_res(residual);
      if (bf16_weights) {
        rms_norm_cuda(as_bf16(d_x.get()), as_bf16(d_res.get()), as_bf16(d_w16.get()), as_bf16(d_y.get()), rows, dim,
                      1e-6f, nullptr);
      } else {
        rms_norm_cuda(as_bf16(d_x.get()), as_bf16(d_res.get()), d_w32.get(), as_bf16(d_y.get()), rows, dim, 1e-6f,
                      nullptr);
      }
      expect_within_ulps(from_bf16(d_y.to_host()), fused, kBf16Mantissa, 1.0f, 0.0f);
      expect_close(from_bf16(d_res.to_host()), sum, 0.0f);
    }
  }
}

TEST(RmsNormBf16Cuda, OutputAndResidualMayAliasTheInput) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 3, dim = 1003;
  const std::vector<uint16_t> x = to_bf16(random_floats(rows * dim, 40, -3.0f, 3.0f));
  const std::vector<uint16_t> residual = to_bf16(random_floats(rows * dim, 41, -3.0f, 3.0f));
  const std::vector<float> weight = random_floats(dim, 42, 0.5f, 1.5f);
  DeviceBuffer<float> d_w(weight);

  // y over x: the norm written where its input was.
  const std::vector<float> sum = rounded_sum(from_bf16(x), from_bf16(residual));
  DeviceBuffer<uint16_t> d_xy(x), d_res(residual);
  rms_norm_cuda(as_bf16(d_xy.get()), as_bf16(d_res.get()), d_w.get(), as_bf16(d_xy.get()), rows, dim, 1e-6f, nullptr);
  expect_within_ulps(from_bf16(d_xy.to_host()), cpu_norm(sum, weight, rows, dim), kBf16Mantissa, 1.0f, 0.0f);
  expect_close(from_bf16(d_res.to_host()), sum, 0.0f);

  // residual as x: the stream doubles (exact in bf16), and the norm is of the doubled values.
  const std::vector<float> doubled = rounded_sum(from_bf16(x), from_bf16(x));
  DeviceBuffer<uint16_t> d_both(x), d_y(rows * dim);
  rms_norm_cuda(as_bf16(d_both.get()), as_bf16(d_both.get()), d_w.get(), as_bf16(d_y.get()), rows, dim, 1e-6f, nullptr);
  expect_close(from_bf16(d_both.to_host()), doubled, 0.0f);
  expect_within_ulps(from_bf16(d_y.to_host()), cpu_norm(doubled, weight, rows, dim), kBf16Mantissa, 1.0f, 0.0f);
}

TEST(RmsNormBf16Cuda, NoRowsLaunchesNothing) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<uint16_t> sentinel = to_bf16({1.0f, 2.0f});
  DeviceBuffer<uint16_t> d_x(sentinel), d_res(sentinel), d_y(sentinel);
  DeviceBuffer<float> d_w(std::vector<float>{1.0f, 1.0f});
  rms_norm_cuda(as_bf16(d_x.get()), as_bf16(d_res.get()), d_w.get(), as_bf16(d_y.get()), 0, 2, 1e-6f, nullptr);
  EXPECT_EQ(d_res.to_host(), sentinel);
  EXPECT_EQ(d_y.to_host(), sentinel);
}

TEST(RmsNormCuda, MatchesCpuForOddDims) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 5;
  for (const int64_t dim : kDims) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const std::vector<float> x = random_floats(rows * dim, 50 + dim, -3.0f, 3.0f);
    const std::vector<float> residual = random_floats(rows * dim, 60 + dim, -3.0f, 3.0f);
    const std::vector<float> weight = random_floats(dim, 70 + dim, 0.5f, 1.5f);
    std::vector<float> sum(rows * dim), expected(rows * dim);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = x[i] + residual[i];
    rms_norm_cpu(sum.data(), weight.data(), expected.data(), rows, dim, 1e-6f);
    DeviceBuffer<float> d_x(x), d_res(residual), d_w(weight), d_y(rows * dim);
    rms_norm_cuda(d_x.get(), d_res.get(), d_w.get(), d_y.get(), rows, dim, 1e-6f, nullptr);
    expect_close(d_y.to_host(), expected, 1e-5f);
    expect_close(d_res.to_host(), sum, 0.0f);
  }
}

TEST(SiluMulBf16Cuda, MatchesCpuForEveryWidth) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t tokens = 5;
  for (const int64_t width : kDims) {
    SCOPED_TRACE("width " + std::to_string(width));
    const std::vector<uint16_t> gate_up = to_bf16(random_floats(tokens * 2 * width, 80 + width, -6.0f, 6.0f));
    std::vector<float> expected(tokens * width);
    silu_mul_cpu(from_bf16(gate_up).data(), expected.data(), tokens, width);
    DeviceBuffer<uint16_t> d_in(gate_up), d_out(tokens * width);
    silu_mul_cuda(as_bf16(d_in.get()), as_bf16(d_out.get()), tokens, width, nullptr);
    expect_within_ulps(from_bf16(d_out.to_host()), round_bf16(expected), kBf16Mantissa, 1.0f, 0.0f);
  }
}

TEST(SiluMulCuda, MatchesCpuForOddWidthsAndNoTokens) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t tokens = 5;
  for (const int64_t width : kDims) {
    SCOPED_TRACE("width " + std::to_string(width));
    const std::vector<float> gate_up = random_floats(tokens * 2 * width, 90 + width, -6.0f, 6.0f);
    std::vector<float> expected(tokens * width);
    silu_mul_cpu(gate_up.data(), expected.data(), tokens, width);
    DeviceBuffer<float> d_in(gate_up), d_out(tokens * width);
    silu_mul_cuda(d_in.get(), d_out.get(), tokens, width, nullptr);
    expect_close(d_out.to_host(), expected, 1e-6f);
  }
  const std::vector<float> sentinel{3.0f};
  DeviceBuffer<float> d_in(sentinel), d_out(sentinel);
  silu_mul_cuda(d_in.get(), d_out.get(), 0, 1, nullptr);
  EXPECT_EQ(d_out.to_host(), sentinel);
}

struct RopeCase {
  int64_t tokens, heads, head_dim, max_positions;
  std::vector<float> inv_freq, cos, sin;
  std::vector<int64_t> positions;
};

// Half-dims of 1, 3 and 15 (element accesses only, or packs with a tail) and 32, 64 (whole packs).
constexpr int64_t kHeadDims[] = {2, 6, 30, 64, 128};

RopeCase rope_case(int64_t head_dim) {
  RopeCase c{7, 3, head_dim, 4096, {}, {}, {}, {}};
  const int64_t half = head_dim / 2;
  c.inv_freq.resize(half);
  for (int64_t i = 0; i < half; ++i) c.inv_freq[i] = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / head_dim);
  c.cos.resize(c.max_positions * half);
  c.sin.resize(c.max_positions * half);
  for (int64_t p = 0; p < c.max_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      c.cos[p * half + i] = std::cos(static_cast<float>(p) * c.inv_freq[i]);
      c.sin[p * half + i] = std::sin(static_cast<float>(p) * c.inv_freq[i]);
    }
  }
  for (int64_t t = 0; t < c.tokens; ++t) c.positions.push_back((t * 977) % c.max_positions);
  return c;
}

std::vector<float> cpu_rope(const RopeCase& c, std::vector<float> x, const std::vector<float>& cos,
                            const std::vector<float>& sin) {
  rope_cpu(x.data(), c.positions.data(), cos.data(), sin.data(), c.tokens, c.heads, c.head_dim);
  return x;
}

// A rotated pair near zero is a difference of products of about 1: float32 rounding of those
// products, 1e-6 or so, is large against the bf16 ulp of the small result.
constexpr float kRopeCancellation = 1e-5f;

TEST(RopeBf16Cuda, FloatAndBf16TablesMatchCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const int64_t head_dim : kHeadDims) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const RopeCase c = rope_case(head_dim);
    const std::vector<uint16_t> x = to_bf16(random_floats(c.tokens * c.heads * head_dim, 100 + head_dim));
    DeviceBuffer<int64_t> d_pos(c.positions);

    DeviceBuffer<float> d_cos(c.cos), d_sin(c.sin);
    DeviceBuffer<uint16_t> d_x(x);
    rope_cuda(as_bf16(d_x.get()), d_pos.get(), d_cos.get(), d_sin.get(), c.tokens, c.heads, head_dim, nullptr);
    expect_within_ulps(from_bf16(d_x.to_host()), round_bf16(cpu_rope(c, from_bf16(x), c.cos, c.sin)), kBf16Mantissa,
                       1.0f, kRopeCancellation);

    const std::vector<float> cos16 = round_bf16(c.cos), sin16 = round_bf16(c.sin);
    DeviceBuffer<uint16_t> d_cos16(to_bf16(cos16)), d_sin16(to_bf16(sin16)), d_x2(x);
    rope_cuda(as_bf16(d_x2.get()), d_pos.get(), as_bf16(d_cos16.get()), as_bf16(d_sin16.get()), c.tokens, c.heads,
              head_dim, nullptr);
    expect_within_ulps(from_bf16(d_x2.to_host()), round_bf16(cpu_rope(c, from_bf16(x), cos16, sin16)), kBf16Mantissa,
                       1.0f, kRopeCancellation);
  }
}

TEST(RopeBf16Cuda, AnglesRoundedToBf16MatchBf16Tables) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const int64_t head_dim : kHeadDims) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const RopeCase c = rope_case(head_dim);
    const std::vector<uint16_t> x = to_bf16(random_floats(c.tokens * c.heads * head_dim, 110 + head_dim));
    DeviceBuffer<int64_t> d_pos(c.positions);
    DeviceBuffer<float> d_freq(c.inv_freq);
    DeviceBuffer<uint16_t> d_x(x);
    rope_angles_cuda(as_bf16(d_x.get()), d_pos.get(), d_freq.get(), c.tokens, c.heads, head_dim, nullptr);
    // cosf / sinf on the GPU and the CPU may differ by an ulp of float32, and where that straddles a
    // bf16 rounding boundary the angle's cos or sin is one bf16 ulp (<= 2^-8 below 1) off: with
    // |x| <= 1, the rotated value moves by at most 2 * 2^-8 = 2^-7.
    expect_within_ulps(from_bf16(d_x.to_host()),
                       round_bf16(cpu_rope(c, from_bf16(x), round_bf16(c.cos), round_bf16(c.sin))), kBf16Mantissa, 1.0f,
                       kRopeCancellation + 0.0078125f);
  }
}

TEST(RopeCuda, OddHalfDimsMatchCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const int64_t head_dim : kHeadDims) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    const RopeCase c = rope_case(head_dim);
    const std::vector<float> x = random_floats(c.tokens * c.heads * head_dim, 120 + head_dim);
    DeviceBuffer<int64_t> d_pos(c.positions);
    DeviceBuffer<float> d_cos(c.cos), d_sin(c.sin), d_x(x);
    rope_cuda(d_x.get(), d_pos.get(), d_cos.get(), d_sin.get(), c.tokens, c.heads, head_dim, nullptr);
    expect_close(d_x.to_host(), cpu_rope(c, x, c.cos, c.sin), 1e-6f);
  }
}

TEST(RopeCuda, NoTokensLaunchesNothingAndAnOddHeadDimThrows) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<uint16_t> sentinel = to_bf16({1.0f, 2.0f, 3.0f});
  DeviceBuffer<uint16_t> d_x(sentinel);
  DeviceBuffer<int64_t> d_pos(std::vector<int64_t>{0});
  DeviceBuffer<float> d_freq(std::vector<float>{1.0f});
  rope_angles_cuda(as_bf16(d_x.get()), d_pos.get(), d_freq.get(), 0, 1, 2, nullptr);
  EXPECT_EQ(d_x.to_host(), sentinel);
  EXPECT_THROW(rope_angles_cuda(as_bf16(d_x.get()), d_pos.get(), d_freq.get(), 1, 1, 3, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace izwi
