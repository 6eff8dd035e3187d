// Activations to FP8 (e4m3) on the device against the same rounding on the host: the dynamic
// scale (max |x| / 448 over the finite values, floored; 1 for all zeros) over a grid-stride reduction, each value
// rounded to nearest even and saturated at +-448 under a given scale. Runs on the CPU through the CUDA emulator
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

uint8_t bits_of(__nv_fp8_e4m3 v) {
  uint8_t b;
  std::memcpy(&b, &v, 1);
  return b;
}

// The e4m3 bytes of x / scale as the host's conversion rounds them, against the device's.
void expect_quantized(const std::vector<float>& x, float scale, const DeviceBuffer<__nv_fp8_e4m3>& out) {
  const float inverse = 1.0f / scale;
  const std::vector<__nv_fp8_e4m3> device = out.to_host();
  int reported = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint8_t expected = bits_of(__nv_fp8_e4m3(x[i] * inverse));
    if (bits_of(device[i]) != expected && reported++ < 10) {
      ADD_FAILURE() << "element " << i << " (" << x[i] << "): device byte " << int{bits_of(device[i])} << ", host "
                    << int{expected};
    }
  }
}

float quantize_dynamic(const std::vector<float>& x, DeviceBuffer<__nv_fp8_e4m3>& out) {
  std::vector<uint16_t> bits = to_bf16(x);
  DeviceBuffer<uint16_t> d_x(bits);
  DeviceBuffer<float> scale(1), amax(std::vector<float>{123.0f});  // the call zeroes its scratch
  quantize_fp8_dynamic_cuda(as_bf16(d_x.get()), static_cast<int64_t>(x.size()), out.get(), scale.get(), amax.get(),
                            nullptr);
  return scale.to_host()[0];
}

TEST(Fp8QuantizeCuda, DynamicScaleIsTheLargestMagnitudeOver448) {
  // One warp's worth, a few blocks, and more than the 4,096-block grid covers (threads loop).
  for (const size_t n : {size_t{1}, size_t{33}, size_t{5000}, size_t{4096 * 256 + 777}}) {
    SCOPED_TRACE(::testing::Message() << n << " elements");
    std::vector<float> x = round_bf16(random_floats(n, static_cast<uint32_t>(n), -3.0f, 3.0f));
    x[n * 7 / 11] = -5.25f;  // the largest magnitude, negative, somewhere past the first block
    DeviceBuffer<__nv_fp8_e4m3> out(n);
    const float scale = quantize_dynamic(x, out);
    EXPECT_EQ(scale, 5.25f / 448.0f);
    expect_quantized(x, scale, out);
  }
}

TEST(Fp8QuantizeCuda, AllZerosTakeScaleOne) {
  const std::vector<float> x(300, 0.0f);
  DeviceBuffer<__nv_fp8_e4m3> out(x.size());
  EXPECT_EQ(quantize_dynamic(x, out), 1.0f);
  expect_quantized(x, 1.0f, out);
}

// One batch, one scale: an inf or NaN in one sequence's row must not set it, or every row of the
// batch would come out NaN (a scale of inf, an inverse of 0, then 0 * inf in the GEMM).
TEST(Fp8QuantizeCuda, NonFiniteValuesLeaveTheScaleToTheFiniteOnes) {
  std::vector<float> x = round_bf16(random_floats(2000, 9, -2.0f, 2.0f));
  x[1500] = 2.5f;
  x[3] = INFINITY;
  x[700] = -INFINITY;
  x[1999] = NAN;
  DeviceBuffer<__nv_fp8_e4m3> out(x.size());
  const float scale = quantize_dynamic(x, out);
  EXPECT_EQ(scale, 2.5f / 448.0f);
  expect_quantized(x, scale, out);
  const std::vector<__nv_fp8_e4m3> device = out.to_host();
  EXPECT_EQ(static_cast<float>(device[3]), 448.0f);
  EXPECT_EQ(static_cast<float>(device[700]), -448.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(device[1999])));
}

// Magnitudes so small that max |x| / 448 is a float whose inverse overflows: the scale's floor
// keeps the zeros zero (not 0 * inf = NaN).
TEST(Fp8QuantizeCuda, TinyMagnitudesTakeTheSmallestScale) {
  std::vector<float> x(64, 0.0f);
  x[5] = 1e-37f;
  x[40] = -3e-38f;
  x = round_bf16(x);
  DeviceBuffer<__nv_fp8_e4m3> out(x.size());
  const float scale = quantize_dynamic(x, out);
  EXPECT_EQ(scale, 1.0f / (448.0f * 512.0f));
  expect_quantized(x, scale, out);
  for (const __nv_fp8_e4m3 v : out.to_host()) EXPECT_FALSE(std::isnan(static_cast<float>(v)));
}

TEST(Fp8QuantizeCuda, StaticScaleSaturatesAt448) {
  const std::vector<float> x = round_bf16(random_floats(1000, 5, -20.0f, 20.0f));
  std::vector<uint16_t> bits = to_bf16(x);
  DeviceBuffer<uint16_t> d_x(bits);
  const float scale = 0.02f;  // |x| / scale reaches 1,000: past e4m3's 448
  DeviceBuffer<float> d_scale(std::vector<float>{scale});
  DeviceBuffer<__nv_fp8_e4m3> out(x.size());
  quantize_fp8_static_cuda(as_bf16(d_x.get()), static_cast<int64_t>(x.size()), d_scale.get(), out.get(), nullptr);
  expect_quantized(x, scale, out);
  const std::vector<__nv_fp8_e4m3> device = out.to_host();
  const float largest = std::fabs(
      static_cast<float>(*std::max_element(device.begin(), device.end(), [](__nv_fp8_e4m3 a, __nv_fp8_e4m3 b) {
        return std::fabs(static_cast<float>(a)) < std::fabs(static_cast<float>(b));
      })));
  EXPECT_EQ(largest, 448.0f);
}

}  // namespace
}  // namespace izwi
