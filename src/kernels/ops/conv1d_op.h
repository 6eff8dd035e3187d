#pragma once
// The 1-D convolution dispatch point (the codecs' and the audio encoders' convolutions; causal
// padding and streaming state are the caller's, codec/causal_conv.h).

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/backend.h"

namespace izwi::ops {

struct Conv1dOptions {
  int64_t stride = 1;
  int64_t padding = 0;  ///< zeros on both sides
  int64_t dilation = 1;
  int64_t groups = 1;
};

/// x [B, in, L], weight [out, in / groups, k], bias [out] or undefined -> [B, out, L'], as
/// torch.nn.functional.conv1d. Cpu, stride 1 and no padding: one product over the im2col matrix
/// (ops::linear) for a dense kernel, or k multiply-adds for a depthwise one, while that matrix stays
/// small (libtorch's CPU convolution re-prepares the kernel on every call and has no fast depthwise
/// path, which dominates streaming's short chunks); otherwise libtorch's conv1d (cuDNN on CUDA).
at::Tensor conv1d(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                  const Conv1dOptions& options = {});

}  // namespace izwi::ops
