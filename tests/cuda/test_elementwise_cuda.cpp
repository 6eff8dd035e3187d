// silu_mul, fused residual + RMSNorm and RoPE on the GPU against their CPU kernels.

#include <cmath>

#include "cuda/cuda_test_util.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"
#include "kernels/cuda/rms_norm_cuda.h"
#include "kernels/cuda/rope_cuda.h"
#include "kernels/cuda/silu_mul_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::random_floats;

TEST(SiluMulCuda, MatchesCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t tokens = 37, width = 1000;
  const std::vector<float> gate_up = random_floats(tokens * 2 * width, 1, -6.0f, 6.0f);
  std::vector<float> expected(tokens * width);
  silu_mul_cpu(gate_up.data(), expected.data(), tokens, width);
  DeviceBuffer<float> d_in(gate_up), d_out(tokens * width);
  silu_mul_cuda(d_in.get(), d_out.get(), tokens, width, nullptr);
  expect_close(d_out.to_host(), expected, 1e-6f);
}

TEST(RmsNormCuda, MatchesCpuWithAndWithoutResidual) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 19, dim = 1536;
  const float eps = 1e-6f;
  const std::vector<float> x = random_floats(rows * dim, 2, -3.0f, 3.0f);
  const std::vector<float> residual = random_floats(rows * dim, 3, -3.0f, 3.0f);
  const std::vector<float> weight = random_floats(dim, 4, 0.5f, 1.5f);

  std::vector<float> expected(rows * dim);
  rms_norm_cpu(x.data(), weight.data(), expected.data(), rows, dim, eps);
  DeviceBuffer<float> d_x(x), d_w(weight), d_y(rows * dim);
  rms_norm_cuda(d_x.get(), nullptr, d_w.get(), d_y.get(), rows, dim, eps, nullptr);
  expect_close(d_y.to_host(), expected, 1e-5f);

  std::vector<float> sum(rows * dim);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = x[i] + residual[i];
  rms_norm_cpu(sum.data(), weight.data(), expected.data(), rows, dim, eps);
  DeviceBuffer<float> d_res(residual);
  rms_norm_cuda(d_x.get(), d_res.get(), d_w.get(), d_y.get(), rows, dim, eps, nullptr);
  expect_close(d_y.to_host(), expected, 1e-5f);
  expect_close(d_res.to_host(), sum, 0.0f);
}

TEST(RopeCuda, TablesAndAnglesMatchCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t tokens = 23, heads = 6, head_dim = 128, half = head_dim / 2, max_positions = 4096;
  std::vector<float> inv_freq(half), cos_table(max_positions * half), sin_table(max_positions * half);
  for (int64_t i = 0; i < half; ++i) inv_freq[i] = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / head_dim);
  for (int64_t p = 0; p < max_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      cos_table[p * half + i] = std::cos(static_cast<float>(p) * inv_freq[i]);
      sin_table[p * half + i] = std::sin(static_cast<float>(p) * inv_freq[i]);
    }
  }
  std::vector<int64_t> positions(tokens);
  for (int64_t t = 0; t < tokens; ++t) positions[t] = (t * 977) % max_positions;
  const std::vector<float> x = random_floats(tokens * heads * head_dim, 5);

  std::vector<float> expected = x;
  rope_cpu(expected.data(), positions.data(), cos_table.data(), sin_table.data(), tokens, heads, head_dim);
  DeviceBuffer<float> d_cos(cos_table), d_sin(sin_table), d_freq(inv_freq);
  DeviceBuffer<int64_t> d_pos(positions);
  DeviceBuffer<float> d_x(x);
  rope_cuda(d_x.get(), d_pos.get(), d_cos.get(), d_sin.get(), tokens, heads, head_dim, nullptr);
  expect_close(d_x.to_host(), expected, 1e-6f);

  // The on-the-fly angles: cosf/sinf of the same float products as the tables above.
  DeviceBuffer<float> d_x2(x);
  rope_angles_cuda(d_x2.get(), d_pos.get(), d_freq.get(), tokens, heads, head_dim, nullptr);
  expect_close(d_x2.to_host(), expected, 1e-5f);
}

}  // namespace
}  // namespace izwi
