// The fused pass between the QKV projection and attention (ops::attention_inputs on the Cpu
// backend) against the same op through libtorch (the Torch backend: libtorch's RMSNorm and RoPE,
// then index_copy_ into the pools).

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "common/reference.h"
#include "kernels/cpu/bf16.h"
#include "kernels/ops/attention_inputs_op.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

struct Case {
  int64_t head_dim;
  bool qk_norm;
  at::ScalarType pool_type;
};

TEST(AttentionInputs, FusedCpuPassMatchesLibtorchOps) {
  at::manual_seed(3);
  for (const Case& c : {Case{128, true, at::kFloat}, Case{128, true, at::kBFloat16}, Case{24, false, at::kFloat},
                        Case{24, true, at::kBFloat16}, Case{64, false, at::kBFloat16}}) {
    const int64_t T = 5, H = 6, KVH = 2, D = c.head_dim, block = 4, blocks = 6;
    const int64_t width = (H + 2 * KVH) * D;
    // The projection's output as a view with a longer row stride, as a stacked projection with
    // more outputs would leave it.
    const at::Tensor qkv = at::randn({T, width + 7}).narrow(1, 0, width);
    ops::AttentionHeads heads{H, KVH, D, {}, {}, 1e-6};
    if (c.qk_norm) {
      heads.q_norm = at::rand({D}) + 0.5;
      heads.k_norm = at::rand({D}) + 0.5;
    }
    const at::Tensor freqs = at::outer(at::arange(40, at::kFloat), at::rand({D / 2}));
    const ops::RopeAngles angles{freqs.cos(), freqs.sin(), {}, at::kFloat};
    const at::Tensor positions = at::tensor({7, 0, 39, 12, 13}, at::kLong);
    const at::Tensor slots = at::tensor({22, 3, 9, 10, 17}, at::kLong);  // scattered over the blocks

    at::Tensor fused_keys = at::zeros({blocks, block, KVH, D}, at::TensorOptions().dtype(c.pool_type));
    at::Tensor fused_values = at::zeros_like(fused_keys);
    at::Tensor torch_keys = at::zeros_like(fused_keys), torch_values = at::zeros_like(fused_keys);
    const at::Tensor fused_q =
        ops::attention_inputs(Backend::host(), qkv, heads, angles, positions, slots, fused_keys, fused_values);
    const at::Tensor torch_q = ops::attention_inputs(Backend::reference(at::kCPU, at::kFloat), qkv, heads, angles,
                                                     positions, slots, torch_keys, torch_values);
    const std::string what = "head_dim " + std::to_string(D) + (c.qk_norm ? " with q/k norm" : "") +
                             (c.pool_type == at::kBFloat16 ? " bf16 pools" : " float32 pools");
    ASSERT_EQ(fused_q.sizes(), torch_q.sizes()) << what;
    EXPECT_LT(max_abs_diff(fused_q, torch_q), 1e-5) << what;
    // The values are copied, in float32 exactly and in bf16 rounded as libtorch rounds.
    EXPECT_TRUE(at::equal(fused_values, torch_values)) << what;
    // Keys: the same floats up to the last bits, which may round a bf16 key one step (2^-7 of it)
    // either way.
    const double rtol = c.pool_type == at::kBFloat16 ? 1.0 / 128 : 1e-5;
    EXPECT_TRUE(at::allclose(fused_keys.to(at::kFloat), torch_keys.to(at::kFloat), rtol, 1e-5)) << what;
    // Every slot outside the step's is left alone.
    const at::Tensor written = at::zeros({blocks * block}, at::kBool).index_fill_(0, slots, true);
    EXPECT_EQ(fused_keys.view({blocks * block, -1}).index({written.logical_not()}).abs().sum().item<double>(), 0.0)
        << what;
  }
}

TEST(AttentionInputs, Bf16RoundingIsLibtorchs) {
  for (const float value : {1.0f, 1.00390625f, 1.01171875f, -3.14159f, 65504.0f, 1e-40f, INFINITY, -INFINITY, NAN}) {
    const uint16_t expected = at::scalar_tensor(value).to(at::kBFloat16).view(at::kShort).item<int16_t>();
    EXPECT_EQ(float_to_bf16(value), expected) << value;
  }
}

}  // namespace
}  // namespace izwi
