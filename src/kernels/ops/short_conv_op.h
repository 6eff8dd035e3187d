#pragma once
// The short-convolution dispatch point (LFM2): one sequence's causal depthwise convolution over
// its new inputs, continuing from its state.

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// bx [length, channels] (new inputs), state [kernel - 1, channels] (the previous inputs, oldest
/// first; updated to the last kernel - 1 inputs), weight_t [kernel, channels], bias [channels] or
/// undefined; writes out [length, channels] (a view into the batch's output). Returns the window
/// [kernel - 1 + length, channels] = [old state; bx], from which callers copy block-boundary
/// snapshots. Cpu: one fused pass for float32; otherwise libtorch ops.
at::Tensor short_conv(KernelBackend backend, const at::Tensor& bx, at::Tensor state, const at::Tensor& weight_t,
                      const at::Tensor& bias, at::Tensor out);

}  // namespace izwi::ops
