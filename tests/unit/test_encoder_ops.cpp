// The ops the codecs and the audio encoders call (kernels/ops: conv1d, conv2d, conv_transpose1d,
// layer_norm, activation, snake_beta) on the host backend (izwi's CPU kernels) and on libtorch's
// reference backend, against the libtorch functions or formulas they stand for.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "kernels/ops/activation_op.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/conv2d_op.h"
#include "kernels/ops/conv_transpose1d_op.h"
#include "kernels/ops/layer_norm_op.h"
#include "kernels/ops/snake_beta_op.h"

namespace izwi {
namespace {

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

struct ConvCase {
  int64_t batch, in, out, kernel, length;
  ops::Conv1dOptions options;
  bool bias;
};

TEST(EncoderOps, Conv1dMatchesLibtorchOnEveryPath) {
  at::manual_seed(21);
  const Backend reference = Backend::reference(at::kCPU, at::kFloat);
  const std::vector<ConvCase> cases{
      {2, 16, 24, 7, 50, {1, 0, 3, 1}, true},   // dense, dilated: the im2col product
      {1, 16, 24, 1, 9, {}, false},             // 1x1 without bias (the quantizer's projections)
      {2, 32, 32, 7, 40, {1, 0, 1, 32}, true},  // depthwise: multiply-adds
      {1, 8, 8, 5, 30, {1, 0, 2, 8}, false},    // depthwise, dilated, no bias
      {1, 64, 64, 7, 12000, {}, true},          // im2col over 4M elements: libtorch's conv1d
      {1, 12, 20, 3, 33, {2, 0, 1, 1}, true},   // stride 2: libtorch's conv1d
      {1, 16, 16, 9, 25, {1, 4, 1, 16}, true},  // padded depthwise (FastConformer's): libtorch's
      {2, 12, 18, 3, 20, {1, 0, 1, 3}, true},   // grouped: libtorch's
  };
  for (const ConvCase& c : cases) {
    const at::Tensor x = at::randn({c.batch, c.in, c.length});
    const at::Tensor weight = at::randn({c.out, c.in / c.options.groups, c.kernel}) * 0.2;
    const at::Tensor bias = c.bias ? at::randn({c.out}) : at::Tensor();
    const ops::Conv1dOptions& o = c.options;
    const at::Tensor want = at::conv1d(x, weight, bias, o.stride, o.padding, o.dilation, o.groups);
    EXPECT_LT(max_diff(ops::conv1d(Backend::host(), x, weight, bias, o), want), 1e-4)
        << "in " << c.in << " out " << c.out << " k " << c.kernel << " groups " << o.groups;
    EXPECT_EQ(max_diff(ops::conv1d(reference, x, weight, bias, o), want), 0.0);
  }
}

TEST(EncoderOps, Conv1dOfAStridedViewReadsItsColumns) {
  at::manual_seed(22);
  // The codec hands the convolution a padded buffer's view; the im2col path reads it in place.
  const at::Tensor buffer = at::randn({2, 16, 60});
  const at::Tensor x = buffer.narrow(2, 5, 40);
  const at::Tensor weight = at::randn({8, 16, 3});
  EXPECT_LT(max_diff(ops::conv1d(Backend::host(), x, weight, {}), at::conv1d(x, weight)), 1e-4);
}

TEST(EncoderOps, Conv2dAndTransposedConv1dMatchLibtorch) {
  at::manual_seed(23);
  const at::Tensor image = at::randn({1, 4, 17, 13});
  const at::Tensor depthwise = at::randn({4, 1, 3, 3}), bias = at::randn({4});
  EXPECT_EQ(max_diff(ops::conv2d(Backend::host(), image, depthwise, bias, 2, 1, 4),
                     at::conv2d(image, depthwise, bias, 2, 1, 1, 4)),
            0.0);
  const at::Tensor x = at::randn({2, 6, 11}), up = at::randn({6, 5, 10});
  EXPECT_EQ(max_diff(ops::conv_transpose1d(Backend::host(), x, up, 5), at::conv_transpose1d(x, up, {}, 5)), 0.0);
}

TEST(EncoderOps, LayerNormWithAndWithoutBias) {
  at::manual_seed(24);
  const at::Tensor x = at::randn({3, 5, 32}) * 3 + 1, weight = at::randn({32}), bias = at::randn({32});
  const at::Tensor mean = x.mean(-1, true), var = x.var(-1, /*unbiased=*/false, true);
  const at::Tensor normed = (x - mean) / (var + 1e-5).sqrt() * weight;
  EXPECT_LT(max_diff(ops::layer_norm(Backend::host(), x, weight, bias, 1e-5), normed + bias), 1e-5);
  EXPECT_LT(max_diff(ops::layer_norm(Backend::host(), x, weight, {}, 1e-5), normed), 1e-5);
}

TEST(EncoderOps, ActivationsMatchTheirFormulas) {
  const at::Tensor x = at::linspace(-6, 6, 241, at::kDouble);
  const at::Tensor erf_gelu = 0.5 * x * (1 + at::erf(x / std::sqrt(2.0)));
  EXPECT_LT(max_diff(ops::activation(Backend::host(), x, ops::Activation::Gelu), erf_gelu), 1e-12);
  EXPECT_LT(max_diff(ops::activation(Backend::host(), x, ops::Activation::Silu), x * at::sigmoid(x)), 1e-12);
  EXPECT_EQ(max_diff(ops::activation(Backend::host(), x, ops::Activation::Relu), x.clamp_min(0)), 0.0);
  EXPECT_LT(max_diff(ops::activation(Backend::host(), x, ops::Activation::Elu), at::where(x > 0, x, x.exp() - 1)),
            1e-12);
  EXPECT_LT(max_diff(ops::activation(Backend::host(), x, ops::Activation::Sigmoid), 1 / (1 + (-x).exp())), 1e-12);
  EXPECT_LT(max_diff(ops::activation(Backend::host(), x, ops::Activation::Tanh),
                     (x.exp() - (-x).exp()) / (x.exp() + (-x).exp())),
            1e-12);
}

TEST(EncoderOps, SnakeBetaFusedIntoAPaddedBufferAndThroughLibtorch) {
  at::manual_seed(25);
  const int64_t channels = 6, length = 37, context = 4;
  const at::Tensor x = at::randn({2, channels, length});
  const at::Tensor alpha = at::rand({1, channels, 1}) + 0.5, inv_beta = at::rand({1, channels, 1}) + 0.5;
  const at::Tensor want = x + inv_beta * (x * alpha).sin().square();
  // The fused CPU pass writes the tail of a convolution's padded input, rows `context + length` apart.
  at::Tensor padded = at::zeros({2, channels, context + length});
  ops::snake_beta(Backend::host(), x, alpha, inv_beta, padded.narrow(2, context, length));
  EXPECT_LT(max_diff(padded.narrow(2, context, length), want), 1e-5);
  EXPECT_EQ(padded.narrow(2, 0, context).abs().max().item<float>(), 0.0f);  // the state columns untouched
  at::Tensor out = at::empty_like(x);
  ops::snake_beta(Backend::reference(at::kCPU, at::kFloat), x, alpha, inv_beta, out);
  EXPECT_LT(max_diff(out, want), 1e-6);
}

}  // namespace
}  // namespace izwi
