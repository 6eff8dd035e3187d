#include "kernels/ops/conv_transpose1d_op.h"

namespace izwi::ops {

at::Tensor conv_transpose1d(const Backend& /*backend: every backend runs libtorch's*/, const at::Tensor& x,
                            const at::Tensor& weight, int64_t stride, int64_t groups) {
  // libtorch 1.13's CPU transposed convolution in bf16 / f16 runs as a forward one (mkldnn) and
  // fails or gives the wrong length; on the CPU those dtypes go through float32, rounded once.
  if (x.is_cpu() && (x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf)) {
    return at::conv_transpose1d(x.to(at::kFloat), weight.to(at::kFloat), {}, stride, 0, 0, groups, 1)
        .to(x.scalar_type());
  }
  return at::conv_transpose1d(x, weight, {}, stride, /*padding=*/0, /*output_padding=*/0, groups, /*dilation=*/1);
}

}  // namespace izwi::ops
