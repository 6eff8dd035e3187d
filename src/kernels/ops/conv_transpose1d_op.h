#pragma once
// The 1-D transposed-convolution dispatch point (the codec decoders' upsampling; the causal trim and
// streaming spill are the caller's, codec/causal_conv.h).

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/backend.h"

namespace izwi::ops {

/// x [B, in, L], weight [in, out / groups, k] -> [B, out, (L - 1) * stride + k] without bias, as
/// torch.nn.functional.conv_transpose1d with no padding. Every backend: libtorch's (a packed CPU
/// kernel is the caller's, layers/packed_weight.h, as its weight is packed at load).
at::Tensor conv_transpose1d(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, int64_t stride,
                            int64_t groups = 1);

}  // namespace izwi::ops
