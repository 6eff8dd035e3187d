#pragma once
// bf16 and f16 buffers for the CUDA kernel tests, and the comparison of a kernel's rounded output
// with the CPU kernel's float32 result rounded the same way.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "kernels/cpu/bf16.h"

namespace izwi::cuda_test {

/// Each value rounded to bf16 bits (nearest even, as libtorch and the kernels round).
inline std::vector<uint16_t> to_bf16(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  std::transform(values.begin(), values.end(), bits.begin(), float_to_bf16);
  return bits;
}

inline std::vector<float> from_bf16(const std::vector<uint16_t>& bits) {
  std::vector<float> values(bits.size());
  std::transform(bits.begin(), bits.end(), values.begin(), bf16_to_float);
  return values;
}

/// values rounded to bf16 and back: what a bf16 kernel sees of float32 inputs.
inline std::vector<float> round_bf16(const std::vector<float>& values) { return from_bf16(to_bf16(values)); }

inline std::vector<uint16_t> to_f16(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = __half_as_ushort(__float2half_rn(values[i]));
  return bits;
}

inline std::vector<float> from_f16(const std::vector<uint16_t>& bits) {
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = __half2float(__ushort_as_half(bits[i]));
  return values;
}

inline __nv_bfloat16* as_bf16(uint16_t* bits) { return reinterpret_cast<__nv_bfloat16*>(bits); }

/// The low-precision bound: the kernel computes in float32 like the CPU kernel, in another order
/// (sums, fused multiply-adds), so the two float32 results differ by a few float32 ulps, and
/// rounding each to a format of `mantissa_bits` gives the same value or its neighbour. Each
/// element must be within `ulps` ulps (of the larger of the two magnitudes) of the CPU result
/// rounded to the format, plus `absolute` for the float32 differences that cancellation (a rotated
/// pair near zero) makes large relative to the result.
inline void expect_within_ulps(const std::vector<float>& actual, const std::vector<float>& expected_rounded,
                               int mantissa_bits, float ulps, float absolute) {
  ASSERT_EQ(actual.size(), expected_rounded.size());
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const float magnitude = std::max(std::fabs(actual[i]), std::fabs(expected_rounded[i]));
    const float ulp = magnitude > 0.0f ? std::ldexp(1.0f, std::ilogb(magnitude) - mantissa_bits) : 0.0f;
    if (!(std::fabs(actual[i] - expected_rounded[i]) <= ulps * ulp + absolute) && reported++ < 10) {
      ADD_FAILURE() << "element " << i << ": cuda " << actual[i] << ", cpu rounded " << expected_rounded[i];
    }
  }
}

constexpr int kBf16Mantissa = 7;
constexpr int kF16Mantissa = 10;

/// bf16 outputs of float32 sums: a bf16 rounding (2^-8 relative) plus the sums' order.
constexpr float kBf16OutputTolerance = 8e-3f;

inline std::vector<float> from_bf16_device(const DeviceBuffer<uint16_t>& y) { return from_bf16(y.to_host()); }

}  // namespace izwi::cuda_test
