#include "kernels/ops/conv_transpose1d_op.h"

namespace izwi::ops {

at::Tensor conv_transpose1d(const Backend& /*backend: every backend runs libtorch's*/, const at::Tensor& x,
                            const at::Tensor& weight, int64_t stride, int64_t groups) {
  return at::conv_transpose1d(x, weight, {}, stride, /*padding=*/0, /*output_padding=*/0, groups, /*dilation=*/1);
}

}  // namespace izwi::ops
