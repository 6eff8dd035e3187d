// ops::pad1d against libtorch's reflection_pad1d and replication_pad1d (float32, where they exist
// on every device), and exact in bf16, which those lack on some devices and versions.

#include <gtest/gtest.h>

#include <tuple>

#include "izwi/errors.h"
#include "kernels/ops/pad1d_op.h"

namespace izwi {
namespace {

TEST(Pad1dOp, MatchesLibtorchsReflectAndReplicatePadding) {
  const at::Tensor x = at::randn({2, 3, 9});
  for (const auto& [left, right] : {std::tuple{0, 0}, {1, 0}, {0, 2}, {3, 5}, {8, 8}}) {
    SCOPED_TRACE(::testing::Message() << "pad " << left << ", " << right);
    EXPECT_TRUE(ops::pad1d(x, left, right, ops::Pad1dMode::Reflect).equal(at::reflection_pad1d(x, {left, right})));
    EXPECT_TRUE(ops::pad1d(x, left, right, ops::Pad1dMode::Replicate).equal(at::replication_pad1d(x, {left, right})));
  }
  // Replicate padding may be longer than the row.
  EXPECT_TRUE(ops::pad1d(x, 20, 11, ops::Pad1dMode::Replicate).equal(at::replication_pad1d(x, {20, 11})));
}

TEST(Pad1dOp, CopiesBf16ValuesExactly) {
  const at::Tensor x = at::randn({4, 17});
  const at::Tensor bf16 = x.to(at::kBFloat16);
  for (const ops::Pad1dMode mode : {ops::Pad1dMode::Reflect, ops::Pad1dMode::Replicate}) {
    const at::Tensor padded = ops::pad1d(bf16, 5, 3, mode);
    EXPECT_EQ(padded.scalar_type(), at::kBFloat16);
    EXPECT_TRUE(padded.to(at::kFloat).equal(ops::pad1d(bf16.to(at::kFloat), 5, 3, mode)));
  }
}

TEST(Pad1dOp, RefusesReflectPaddingAsLongAsTheRow) {
  const at::Tensor x = at::randn({1, 4});
  EXPECT_THROW(ops::pad1d(x, 4, 0, ops::Pad1dMode::Reflect), Error);
  EXPECT_THROW(ops::pad1d(x, 0, 4, ops::Pad1dMode::Reflect), Error);
  EXPECT_THROW(ops::pad1d(x, -1, 0, ops::Pad1dMode::Replicate), Error);
  EXPECT_THROW(ops::pad1d(at::empty({1, 0}), 1, 1, ops::Pad1dMode::Replicate), Error);
}

}  // namespace
}  // namespace izwi
