// The CPU kernels against plain libtorch on odd shapes, both weight formats and both the
// GEMV (decode) and GEMM (prefill) regimes.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "common/reference.h"
#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

TEST(CpuKernels, LinearMatchesLibtorchForF32AndBf16Weights) {
  at::manual_seed(0);
  for (int64_t tokens : {1, 3, 4, 5, 16, 17, 40}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{64, 96}, {67, 33}, {300, 129}}) {
      const at::Tensor x = at::randn({tokens, in});
      const at::Tensor w = at::randn({out, in}) * 0.1;
      const at::Tensor b = at::randn({out});
      for (bool bf16 : {false, true}) {
        const at::Tensor stored = bf16 ? w.to(at::kBFloat16) : w;
        const at::Tensor expected = at::linear(x, stored.to(at::kFloat), b);
        at::Tensor y = at::empty({tokens, out});
        linear_cpu(x.data_ptr<float>(), tokens, in, stored.data_ptr(), bf16 ? WeightFormat::BF16 : WeightFormat::F32,
                   out, b.data_ptr<float>(), y.data_ptr<float>());
        EXPECT_LT(max_abs_diff(y, expected), 1e-4) << "tokens " << tokens << " in " << in << " out " << out
                                                    << (bf16 ? " bf16" : " f32");
      }
    }
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
