// The codec's causal convolution on the CPU panel kernels against the same convolution through
// libtorch: inputs long enough that the packed path splits a stream's positions into several
// products, several streams at once, dilation, and the streaming state carried between chunks.

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "bench_support/random_weights.h"
#include "codec/causal_conv.h"
#include "kernels/backend.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {
namespace {

// in 96 x kernel 7 = 672 columns: 7000 positions are two pieces of at most 4M im2col elements.
constexpr int64_t kIn = 96, kOut = 64, kKernel = 7, kDilation = 3, kLength = 7000;

// What a conv is built for: the panel kernels `kernels` (packed weights), or libtorch's ops when
// null. The backends live for the whole test run, as a model's outlives its parts.
const Backend& backend_for(const PanelKernels* kernels) {
  static const Backend torch = Backend::reference(at::kCPU, at::kFloat);
  static std::map<const PanelKernels*, Backend> pinned;
  if (kernels == nullptr) return torch;
  return pinned.emplace(kernels, Backend::host(*kernels)).first->second;
}

CausalConv1d make_conv(const PanelKernels* kernels) {
  RandomWeights weights(7, at::kCPU);
  weights.set_backend(backend_for(kernels));
  return CausalConv1d(weights, "conv", kIn, kOut, kKernel, kDilation);
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

TEST(CausalConvPacked, MatchesLibtorchForEveryKernelVariant) {
  const CausalConv1d reference = make_conv(nullptr);
  const at::Tensor x = at::randn({3, kIn, kLength});
  const at::Tensor want = reference.forward(x);
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    const CausalConv1d packed = make_conv(kernels);
    EXPECT_EQ(packed.weight_bytes(), reference.weight_bytes()) << kernels->name;
    const at::Tensor got = packed.forward(x);
    ASSERT_EQ(got.sizes(), want.sizes()) << kernels->name;
    // float32 weights: every variant, avx512_bf16 included, sums float32 products.
    EXPECT_LT(relative_error(got, want), 1e-5) << kernels->name;
  }
}

TEST(CausalConvPacked, StreamedChunksEqualTheWholeInput) {
  const CausalConv1d conv = make_conv(&active_panel_kernels());
  const at::Tensor x = at::randn({2, kIn, kLength});
  const at::Tensor whole = conv.forward(x);
  at::Tensor state = conv.initial_state(2, x.options());
  std::vector<at::Tensor> pieces;
  int64_t start = 0;
  for (const int64_t chunk : {5, 1, 6500, 494}) {
    pieces.push_back(conv.forward(x.narrow(2, start, chunk), state));
    start += chunk;
  }
  EXPECT_LT(relative_error(at::cat(pieces, 2), whole), 1e-6);
}

// A transposed convolution as the Qwen3-TTS decoder blocks have them (kernel twice the stride).
constexpr int64_t kUpIn = 96, kUpOut = 48, kUpStride = 5, kUpLength = 300;

CausalConvTranspose1d make_upsample(const PanelKernels* kernels) {
  RandomWeights weights(11, at::kCPU);
  weights.set_backend(backend_for(kernels));
  return CausalConvTranspose1d(weights, "up", kUpIn, kUpOut, 2 * kUpStride, kUpStride);
}

// Streams `x` through `conv` in the given chunk lengths and concatenates the output.
at::Tensor streamed_upsample(const CausalConvTranspose1d& conv, const at::Tensor& x,
                             const std::vector<int64_t>& chunks) {
  at::Tensor state = conv.initial_state(x.size(0), x.options());
  std::vector<at::Tensor> pieces;
  int64_t start = 0;
  for (const int64_t chunk : chunks) {
    pieces.push_back(conv.forward(x.narrow(2, start, chunk), state));
    start += chunk;
  }
  return at::cat(pieces, 2);
}

TEST(CausalConvTransposePacked, MatchesLibtorchForEveryKernelVariantWholeAndStreamed) {
  const CausalConvTranspose1d reference = make_upsample(nullptr);
  const at::Tensor x = at::randn({2, kUpIn, kUpLength});
  const at::Tensor want = streamed_upsample(reference, x, {kUpLength});
  ASSERT_EQ(want.sizes(), (std::vector<int64_t>{2, kUpOut, kUpLength * kUpStride}));
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    const CausalConvTranspose1d packed = make_upsample(kernels);
    EXPECT_EQ(packed.weight_bytes(), reference.weight_bytes()) << kernels->name;
    EXPECT_LT(relative_error(streamed_upsample(packed, x, {kUpLength}), want), 1e-5) << kernels->name;
    // The kernel's spill past a chunk's end carries into the next chunk's first columns.
    EXPECT_LT(relative_error(streamed_upsample(packed, x, {1, 7, 2, 290}), want), 1e-5) << kernels->name;
  }
}

}  // namespace
}  // namespace izwi
