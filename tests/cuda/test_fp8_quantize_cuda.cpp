// Activations to FP8 (e4m3) on the device, one scale per token row, against the same rounding on
// the host: each row's scale (max |x| / 448 over its finite values, floored; 1 for a row of zeros)
// from a block reduction, each value rounded to nearest even and saturated at +-448, and a row's
// bytes and scale the same whatever rows are beside it. Runs on the CPU through the CUDA emulator
// (tests/cuda_emu); not yet on a GPU.

#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/cuda/fp8_quantize_cuda.h"

namespace izwi {
namespace {

using cuda_test::as_bf16;
using cuda_test::DeviceBuffer;
using cuda_test::random_floats;
using cuda_test::round_bf16;
using cuda_test::to_bf16;

constexpr float kMinScale = 1.0f / (448.0f * 512.0f);

uint8_t bits_of(__nv_fp8_e4m3 v) {
  uint8_t b;
  std::memcpy(&b, &v, 1);
  return b;
}

struct Quantized {
  std::vector<__nv_fp8_e4m3> bytes;
  std::vector<float> scales;
};

Quantized quantize_rows(const std::vector<float>& x, int64_t tokens, int64_t in) {
  std::vector<uint16_t> bits = to_bf16(x);
  DeviceBuffer<uint16_t> d_x(bits);
  DeviceBuffer<__nv_fp8_e4m3> out(x.size());
  DeviceBuffer<float> scales(std::vector<float>(tokens, 123.0f));
  quantize_fp8_rows_cuda(as_bf16(d_x.get()), tokens, in, out.get(), scales.get(), nullptr);
  return {out.to_host(), scales.to_host()};
}

// The host's scale of one row and its e4m3 bytes, against the device's.
void expect_rows(const std::vector<float>& x, int64_t tokens, int64_t in, const Quantized& q) {
  int reported = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    float amax = 0.0f;
    for (int64_t k = 0; k < in; ++k) {
      if (std::isfinite(x[t * in + k])) amax = std::max(amax, std::fabs(x[t * in + k]));
    }
    const float scale = amax > 0.0f ? std::max(amax / 448.0f, kMinScale) : 1.0f;
    EXPECT_EQ(q.scales[t], scale) << "row " << t;
    const float inverse = 1.0f / scale;
    for (int64_t k = 0; k < in; ++k) {
      const size_t i = t * in + k;
      const uint8_t expected = bits_of(__nv_fp8_e4m3(x[i] * inverse));
      if (bits_of(q.bytes[i]) != expected && reported++ < 10) {
        ADD_FAILURE() << "row " << t << " column " << k << " (" << x[i] << "): device byte " << int{bits_of(q.bytes[i])}
                      << ", host " << int{expected};
      }
    }
  }
}

TEST(Fp8QuantizeCuda, EachRowsScaleIsItsLargestMagnitudeOver448) {
  // Rows shorter than the block, one of several passes, and a width no pack divides.
  for (const auto& [tokens, in] : {std::pair<int64_t, int64_t>{1, 16}, {3, 256}, {37, 2048}, {5, 4133}}) {
    SCOPED_TRACE(::testing::Message() << tokens << " x " << in);
    std::vector<float> x = round_bf16(random_floats(tokens * in, static_cast<uint32_t>(tokens * in), -3.0f, 3.0f));
    x[(tokens - 1) * in + in * 7 / 11] = -5.25f;  // the last row's largest magnitude, negative
    const Quantized q = quantize_rows(x, tokens, in);
    EXPECT_EQ(q.scales[tokens - 1], 5.25f / 448.0f);
    expect_rows(x, tokens, in, q);
  }
}

TEST(Fp8QuantizeCuda, ARowOfZerosTakesScaleOne) {
  std::vector<float> x = round_bf16(random_floats(3 * 300, 4, -1.0f, 1.0f));
  std::fill(x.begin() + 300, x.begin() + 600, 0.0f);
  const Quantized q = quantize_rows(x, 3, 300);
  EXPECT_EQ(q.scales[1], 1.0f);
  expect_rows(x, 3, 300, q);
}

// An inf or NaN must not set its row's scale: the row's other values keep theirs, the inf
// saturates, the NaN stays NaN.
TEST(Fp8QuantizeCuda, NonFiniteValuesLeaveTheScaleToTheFiniteOnes) {
  std::vector<float> x = round_bf16(random_floats(2 * 1000, 9, -2.0f, 2.0f));
  x[500] = 2.5f;
  x[3] = INFINITY;
  x[700] = -INFINITY;
  x[999] = NAN;
  const Quantized q = quantize_rows(x, 2, 1000);
  EXPECT_EQ(q.scales[0], 2.5f / 448.0f);
  expect_rows(x, 2, 1000, q);
  EXPECT_EQ(static_cast<float>(q.bytes[3]), 448.0f);
  EXPECT_EQ(static_cast<float>(q.bytes[700]), -448.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(q.bytes[999])));
}

// Magnitudes so small that max |x| / 448 is a float whose inverse overflows: the scale's floor
// keeps the zeros zero (not 0 * inf = NaN).
TEST(Fp8QuantizeCuda, TinyMagnitudesTakeTheSmallestScale) {
  std::vector<float> x(64, 0.0f);
  x[5] = 1e-37f;
  x[40] = -3e-38f;
  x = round_bf16(x);
  const Quantized q = quantize_rows(x, 1, 64);
  EXPECT_EQ(q.scales[0], kMinScale);
  expect_rows(x, 1, 64, q);
  for (const __nv_fp8_e4m3 v : q.bytes) EXPECT_FALSE(std::isnan(static_cast<float>(v)));
}

// A request's quantized activations must not depend on the batch it shares a step with: each row
// quantized alone gives the bytes and scale it gets among others of far larger magnitude.
TEST(Fp8QuantizeCuda, ARowsBytesDoNotDependOnTheOtherRows) {
  const int64_t tokens = 4, in = 512;
  std::vector<float> x = round_bf16(random_floats(tokens * in, 21, -0.05f, 0.05f));
  for (int64_t k = 0; k < in; ++k) x[2 * in + k] *= 1000.0f;  // a loud row beside quiet ones
  x = round_bf16(x);
  const Quantized together = quantize_rows(x, tokens, in);
  for (int64_t t = 0; t < tokens; ++t) {
    const std::vector<float> row(x.begin() + t * in, x.begin() + (t + 1) * in);
    const Quantized alone = quantize_rows(row, 1, in);
    EXPECT_EQ(alone.scales[0], together.scales[t]) << "row " << t;
    for (int64_t k = 0; k < in; ++k) ASSERT_EQ(bits_of(alone.bytes[k]), bits_of(together.bytes[t * in + k])) << t;
  }
}

}  // namespace
}  // namespace izwi
