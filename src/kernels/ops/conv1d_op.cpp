#include "kernels/ops/conv1d_op.h"

#include "kernels/ops/linear_op.h"

namespace izwi::ops {
namespace {

/// Largest im2col matrix (elements) the small-input paths build.
constexpr int64_t kMaxIm2colElements = int64_t{4} << 20;

}  // namespace

at::Tensor conv1d(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                  const Conv1dOptions& options) {
  const int64_t batch = x.size(0), in_channels = x.size(1), length = x.size(2);
  const int64_t out_channels = weight.size(0), k = weight.size(2), dilation = options.dilation;
  const int64_t out_len = length - (k - 1) * dilation;
  if (backend.cpu_kernels() && x.is_cpu() && options.stride == 1 && options.padding == 0 && out_len > 0) {
    if (options.groups == 1 && batch * out_len * in_channels * k <= kMaxIm2colElements) {
      const at::Tensor xc = x.contiguous();
      // Row (b, t) of the im2col matrix is input channel c at tap j in column c * k + j, read in place.
      const at::Tensor cols =
          xc.as_strided({batch, out_len, in_channels, k}, {in_channels * length, 1, length, dilation});
      const at::Tensor out = linear(backend, cols.reshape({batch * out_len, in_channels * k}),
                                    weight.reshape({out_channels, in_channels * k}), bias);
      return out.view({batch, out_len, out_channels}).transpose(1, 2);
    }
    if (options.groups == in_channels && out_channels == in_channels &&
        batch * out_len * in_channels <= kMaxIm2colElements) {
      at::Tensor out = bias.defined() ? bias.view({1, -1, 1}).expand({batch, in_channels, out_len}).clone()
                                      : at::zeros({batch, in_channels, out_len}, x.options());
      for (int64_t j = 0; j < k; ++j)
        out.addcmul_(x.narrow(2, j * dilation, out_len), weight.select(2, j).view({1, -1, 1}));
      return out;
    }
  }
  return at::conv1d(x, weight, bias, options.stride, options.padding, options.dilation, options.groups);
}

}  // namespace izwi::ops
