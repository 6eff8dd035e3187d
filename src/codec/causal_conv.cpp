#include "codec/causal_conv.h"

#include <vector>

#include "codec/snake_beta.h"
#include "common/check.h"
#include "io/weight_source.h"
#include "kernels/ops/conv1d_op.h"
#include "kernels/ops/conv_transpose1d_op.h"

namespace izwi {
namespace {

/// Largest im2col matrix (elements) the packed path's pieces of positions build.
constexpr int64_t kMaxIm2colElements = int64_t{4} << 20;

}  // namespace

at::Tensor CausalConv1d::apply_packed(const at::Tensor& padded) const {
  const at::Tensor x = padded.contiguous();
  IZWI_CHECK(x.scalar_type() == at::kFloat, "packed convolution: expected a float32 input");
  const int64_t batch = x.size(0), length = x.size(2), taps = packed_.in_features() / in_channels_;
  const int64_t out_len = length - context_, out_channels = packed_.out_features();
  // Column c * taps + j of the product is input channel c at tap j: the kernels read it in place,
  // and write channels-first, as libtorch's convolution returns it.
  std::vector<int64_t> offsets(static_cast<size_t>(packed_.in_features()));
  for (int64_t c = 0; c < in_channels_; ++c) {
    for (int64_t j = 0; j < taps; ++j) offsets[c * taps + j] = c * length + j * dilation_;
  }
  const at::Tensor bias = bias_.defined() ? bias_.to(at::kFloat).contiguous() : at::Tensor();
  at::Tensor out = at::empty({batch, out_channels, out_len}, x.options());
  // Pieces of a stream's positions bound the kernels' arranged copy of the inputs (positions x
  // in * k floats) in a long whole-sequence decode.
  const int64_t rows = std::max<int64_t>(1, kMaxIm2colElements / packed_.in_features());
  for (int64_t b = 0; b < batch; ++b) {
    const float* stream = x.data_ptr<float>() + b * in_channels_ * length;
    float* stream_out = out.data_ptr<float>() + b * out_channels * out_len;
    for (int64_t t0 = 0; t0 < out_len; t0 += rows) {
      packed_.product(PanelInputs{stream + t0, 1, offsets.data()}, std::min(rows, out_len - t0),
                      bias.defined() ? bias.data_ptr<float>() : nullptr, PanelOutputs{stream_out + t0, 1, out_len});
    }
  }
  return out;
}

at::Tensor CausalConv1d::apply(const at::Tensor& padded) const {
  if (packed_.defined()) return apply_packed(padded);
  return ops::conv1d(*backend_, padded, weight_, bias_, {/*stride=*/1, /*padding=*/0, dilation_, groups_});
}

CausalConv1d::CausalConv1d(WeightSource& weights, const std::string& prefix, int64_t in_channels, int64_t out_channels,
                           int64_t kernel_size, int64_t dilation, int64_t groups, bool bias)
    : backend_(&weights.backend()),
      in_channels_(in_channels),
      dilation_(dilation),
      groups_(groups),
      context_((kernel_size - 1) * dilation) {
  weight_ = weights.take(prefix + ".weight", {out_channels, in_channels / groups, kernel_size}).contiguous();
  if (bias) bias_ = weights.take(prefix + ".bias", {out_channels});
  if (const PanelKernels* kernels = weights.cpu_kernels(); groups == 1 && kernels != nullptr) {
    const at::Tensor weight_2d = weight_.view({out_channels, in_channels * kernel_size});
    if (PackedWeight::packable(weight_2d)) {
      packed_ = PackedWeight::pack(weight_2d, *kernels);
      weight_ = at::Tensor();
    }
  }
}

at::Tensor CausalConv1d::initial_state(int64_t batch, const at::TensorOptions& options) const {
  return at::zeros({batch, in_channels_, context_}, options);
}

at::Tensor CausalConv1d::forward(const at::Tensor& x, at::Tensor& state, const SnakeBeta* activation) const {
  if (context_ == 0) return apply(activation != nullptr ? activation->forward(x) : x);
  IZWI_CHECK(state.size(0) == x.size(0) && state.size(2) == context_, "conv state shape");
  // One buffer: the state's columns, then x (activated on its way in), with no concatenation.
  at::Tensor padded = at::empty({x.size(0), x.size(1), context_ + x.size(2)}, x.options());
  padded.narrow(2, 0, context_).copy_(state);
  const at::Tensor tail = padded.narrow(2, context_, x.size(2));
  if (activation != nullptr) {
    activation->forward_into(x, tail);
  } else {
    tail.copy_(x);
  }
  state = padded.narrow(2, padded.size(2) - context_, context_).contiguous();
  return apply(padded);
}

at::Tensor CausalConv1d::forward(const at::Tensor& x) const { return apply(at::constant_pad_nd(x, {context_, 0})); }

CausalConvTranspose1d::CausalConvTranspose1d(WeightSource& weights, const std::string& prefix, int64_t in_channels,
                                             int64_t out_channels, int64_t kernel_size, int64_t stride, int64_t groups,
                                             bool bias)
    : backend_(&weights.backend()),
      out_channels_(out_channels),
      stride_(stride),
      groups_(groups),
      tail_(kernel_size - stride) {
  IZWI_CHECK(kernel_size >= stride, "transposed conv kernel {} shorter than stride {}", kernel_size, stride);
  weight_ = weights.take(prefix + ".weight", {in_channels, out_channels / groups, kernel_size});
  if (bias) bias_ = weights.take(prefix + ".bias", {out_channels});
  if (const PanelKernels* kernels = weights.cpu_kernels(); groups == 1 && kernels != nullptr) {
    // Row o * k + j holds tap j of output channel o: [in, out, k] -> [out * k, in].
    const at::Tensor taps = weight_.permute({1, 2, 0}).reshape({out_channels * kernel_size, in_channels}).contiguous();
    if (PackedWeight::packable(taps)) {
      packed_ = PackedWeight::pack(taps, *kernels);
      weight_ = at::Tensor();
    }
  }
}

at::Tensor CausalConvTranspose1d::full_output(const at::Tensor& x) const {
  if (!packed_.defined()) return ops::conv_transpose1d(*backend_, x, weight_, stride_, groups_);
  // Every input column times every tap in one product on the panel kernels (libtorch's CPU
  // transposed convolution is one BLAS call on one thread here), then the taps overlap-added.
  const at::Tensor xc = x.contiguous();
  IZWI_CHECK(xc.scalar_type() == at::kFloat, "packed transposed convolution: expected a float32 input");
  const int64_t batch = xc.size(0), in_channels = xc.size(1), length = xc.size(2), k = tail_ + stride_;
  // Input channel c of a channels-first stream starts at c * length: read in place, and written
  // as col2im takes it, [B, out * k, T].
  std::vector<int64_t> offsets(static_cast<size_t>(in_channels));
  for (int64_t c = 0; c < in_channels; ++c) offsets[c] = c * length;
  at::Tensor columns = at::empty({batch, packed_.out_features(), length}, xc.options());
  for (int64_t b = 0; b < batch; ++b) {
    packed_.product(PanelInputs{xc.data_ptr<float>() + b * in_channels * length, 1, offsets.data()}, length, nullptr,
                    PanelOutputs{columns.data_ptr<float>() + b * packed_.out_features() * length, 1, length});
  }
  return at::col2im(columns, {1, length * stride_ + tail_}, {1, k}, {1, 1}, {0, 0}, {1, stride_})
      .view({batch, out_channels_, length * stride_ + tail_});
}

at::Tensor CausalConvTranspose1d::initial_state(int64_t batch, const at::TensorOptions& options) const {
  return at::zeros({batch, out_channels_, tail_}, options);
}

at::Tensor CausalConvTranspose1d::forward(const at::Tensor& x, at::Tensor& state) const {
  // Full transposed conv without bias: [B, out, T*stride + tail]. Column t*stride + j gets input
  // t's tap j, so the previous chunk's spill lands on this chunk's first `tail` columns.
  at::Tensor full = full_output(x);
  const int64_t kept = x.size(2) * stride_;
  if (tail_ > 0) {
    IZWI_CHECK(state.size(0) == x.size(0) && state.size(2) == tail_, "transposed conv state shape");
    full.narrow(2, 0, tail_).add_(state);
    state = full.narrow(2, kept, tail_).clone();
  }
  const at::Tensor out = full.narrow(2, 0, kept);
  return bias_.defined() ? out + bias_.view({1, -1, 1}) : out.contiguous();
}

}  // namespace izwi
