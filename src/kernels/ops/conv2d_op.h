#pragma once
// The 2-D convolution dispatch point (FastConformer's subsampling stem).

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/backend.h"

namespace izwi::ops {

/// x [B, in, H, W], weight [out, in / groups, kh, kw], bias [out] or undefined, the same stride and
/// padding on both axes -> [B, out, H', W'], as torch.nn.functional.conv2d. Every backend:
/// libtorch's conv2d (oneDNN on the CPU, cuDNN on CUDA).
at::Tensor conv2d(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                  int64_t stride = 1, int64_t padding = 0, int64_t groups = 1);

}  // namespace izwi::ops
