#pragma once
// Causal 1-D convolutions with streaming state. A causal Conv1d left-pads its input by
// (k-1)*dilation zeros; in streaming the padding is the previous chunk's last input columns
// (zeros at stream start), so chunked output equals the whole-sequence output exactly. A causal
// ConvTranspose1d trims (k - stride) columns on the right; in streaming those columns (the kernel
// spill of the last input) are kept, without bias, and added to the next chunk's first columns.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "layers/packed_weight.h"

namespace izwi {

class Backend;
class SnakeBeta;
class WeightSource;

class CausalConv1d {
 public:
  CausalConv1d() = default;
  /// Reads `<prefix>.weight` [out, in/groups, k] and `<prefix>.bias` [out] (when `bias`). With
  /// CPU kernels (WeightSource::cpu_kernels), a dense kernel is kept packed for them instead;
  /// otherwise it runs through ops::conv1d on the weights' backend, which must outlive it.
  CausalConv1d(WeightSource& weights, const std::string& prefix, int64_t in_channels, int64_t out_channels,
               int64_t kernel_size, int64_t dilation = 1, int64_t groups = 1, bool bias = true);

  int64_t in_channels() const { return in_channels_; }
  /// Input columns carried between chunks: (k-1)*dilation.
  int64_t context() const { return context_; }
  /// Zero state for `batch` streams: [batch, in_channels, context].
  at::Tensor initial_state(int64_t batch, const at::TensorOptions& options) const;
  /// x [B, in, T] -> [B, out, T]; `state` [B, in, context] is read and replaced. With
  /// `activation`, the convolution of activation(x), applied as x enters the padded input (the
  /// state then holds activated columns, as it would with the activation run first).
  at::Tensor forward(const at::Tensor& x, at::Tensor& state, const SnakeBeta* activation = nullptr) const;
  /// Without state: zero left padding (the start of a stream).
  at::Tensor forward(const at::Tensor& x) const;
  int64_t weight_bytes() const {
    return (packed_.defined() ? packed_.bytes() : weight_.nbytes()) + (bias_.defined() ? bias_.nbytes() : 0);
  }

 private:
  /// The convolution of an already padded input [B, in, context + T].
  at::Tensor apply(const at::Tensor& padded) const;

  /// The packed path: the kernels read the input columns in place, in pieces of positions.
  at::Tensor apply_packed(const at::Tensor& padded) const;

  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  at::Tensor weight_, bias_;
  PackedWeight packed_;  ///< [out, in * k] packed (groups == 1; then weight_ is empty)
  int64_t in_channels_ = 0, dilation_ = 1, groups_ = 1, context_ = 0;
};

class CausalConvTranspose1d {
 public:
  CausalConvTranspose1d() = default;
  /// Reads `<prefix>.weight` [in, out/groups, k] and `<prefix>.bias` [out] (when `bias`). With CPU
  /// kernels (WeightSource::cpu_kernels), a dense kernel is kept packed as [out * k, in] instead;
  /// otherwise it runs through ops::conv_transpose1d on the weights' backend.
  CausalConvTranspose1d(WeightSource& weights, const std::string& prefix, int64_t in_channels, int64_t out_channels,
                        int64_t kernel_size, int64_t stride, int64_t groups = 1, bool bias = true);

  int64_t out_channels() const { return out_channels_; }
  /// Output columns carried between chunks: k - stride.
  int64_t tail() const { return tail_; }
  /// Zero state for `batch` streams: [batch, out_channels, tail].
  at::Tensor initial_state(int64_t batch, const at::TensorOptions& options) const;
  /// x [B, in, T] -> [B, out, T*stride]; `state` [B, out, tail] is read and replaced.
  at::Tensor forward(const at::Tensor& x, at::Tensor& state) const;
  int64_t weight_bytes() const {
    return (packed_.defined() ? packed_.bytes() : weight_.nbytes()) + (bias_.defined() ? bias_.nbytes() : 0);
  }

 private:
  /// The whole transposed convolution without bias: [B, out, T*stride + tail].
  at::Tensor full_output(const at::Tensor& x) const;

  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  at::Tensor weight_, bias_;
  PackedWeight packed_;  ///< [out * k, in] packed (groups == 1 with CPU kernels; then weight_ is empty)
  int64_t out_channels_ = 0, stride_ = 1, groups_ = 1, tail_ = 0;
};

}  // namespace izwi
