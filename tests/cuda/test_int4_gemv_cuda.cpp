// The int4 weight-only GEMV kernel against a host reference computed from the same quantized
// values: plain and act-order columns, with and without zero points, 1-11 token rows.
// Written with the kernel on 2026-11-29; runs on the CPU through the CUDA emulator
// (tests/cuda_emu), not yet on a GPU.

#include <algorithm>
#include <numeric>
#include <random>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/cuda/int4_gemv_cuda.h"

namespace izwi {
namespace {

using cuda_test::as_bf16;
using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::from_bf16_device;
using cuda_test::kBf16OutputTolerance;
using cuda_test::random_floats;
using cuda_test::round_bf16;
using cuda_test::to_bf16;

void check_int4(int64_t tokens, int64_t out, int64_t in, int64_t group, bool act_order, bool with_zeros) {
  SCOPED_TRACE(::testing::Message() << "tokens " << tokens << " out " << out << " in " << in << " group " << group
                                    << (act_order ? " act-order" : "") << (with_zeros ? " zeros" : ""));
  const int64_t groups = in / group;
  std::mt19937 rng(static_cast<uint32_t>(tokens * 131 + out + in + group));
  std::uniform_int_distribution<int> nibble(0, 15);
  std::vector<uint8_t> q(out * in), values(out * in / 2), zeros(out * groups);
  for (uint8_t& v : q) v = static_cast<uint8_t>(nibble(rng));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < in / 2; ++j) values[o * in / 2 + j] = q[o * in + 2 * j] | q[o * in + 2 * j + 1] << 4;
  }
  for (uint8_t& z : zeros) z = static_cast<uint8_t>(nibble(rng));
  const std::vector<float> scales = random_floats(out * groups, 7, 0.001f, 0.02f);
  std::vector<int64_t> order(in);
  std::iota(order.begin(), order.end(), 0);
  if (act_order) std::shuffle(order.begin(), order.end(), rng);
  const std::vector<float> x = round_bf16(random_floats(tokens * in, 8, -2.0f, 2.0f));
  const std::vector<float> bias = round_bf16(random_floats(out, 9, -0.5f, 0.5f));

  std::vector<float> expected(tokens * out);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = bias[o];
      for (int64_t k = 0; k < in; ++k) {
        const int64_t g = o * groups + k / group;
        const double zero = with_zeros ? zeros[g] : 8.0;
        sum += (q[o * in + k] - zero) * scales[g] * x[t * in + order[k]];
      }
      expected[t * out + o] = static_cast<float>(sum);
    }
  }

  DeviceBuffer<uint8_t> d_values(values), d_zeros(zeros);
  DeviceBuffer<float> d_scales(scales);
  DeviceBuffer<int64_t> d_order(order);
  std::vector<uint16_t> x_bits = to_bf16(x), bias_bits = to_bf16(bias);
  DeviceBuffer<uint16_t> d_x(x_bits), d_bias(bias_bits), d_y(tokens * out);
  Int4Weights w;
  w.values = d_values.get();
  w.scales = d_scales.get();
  w.zeros = with_zeros ? d_zeros.get() : nullptr;
  w.column_order = act_order ? d_order.get() : nullptr;
  w.out = out;
  w.in = in;
  w.group_size = group;
  DeviceBuffer<float> workspace(std::max<size_t>(1, int4_linear_workspace_bytes(w, tokens) / sizeof(float)));
  int4_linear_cuda(as_bf16(d_x.get()), w, as_bf16(d_bias.get()), as_bf16(d_y.get()), tokens, workspace.get(), nullptr);
  expect_close(from_bf16_device(d_y), expected, kBf16OutputTolerance);
}

TEST(Int4GemvCuda, MatchesTheDequantizedProduct) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const int64_t tokens : {1, 3, 8, 11}) check_int4(tokens, 77, 1024, 128, false, true);
  check_int4(2, 64, 96, 32, false, false);      // symmetric (zero 8), a row shorter than a warp's stride
  check_int4(5, 130, 2048, 64, true, true);     // act-order columns
  check_int4(1, 4096, 4096, 128, true, false);  // a real layer's size
}

TEST(Int4GemvCuda, RefusesLayoutsItCannotRead) {
  Int4Weights w;
  w.out = 16;
  w.in = 48;  // not a multiple of 32
  w.group_size = 16;
  EXPECT_THROW(int4_linear_cuda(nullptr, w, nullptr, nullptr, 1, nullptr, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace izwi
