#pragma once
// The gated-activation dispatch point: silu(gate) * up of a fused [gate | up] projection.

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// gate_up [T, 2 * width] -> [T, width]. Cpu and Cuda: one fused pass for float32 contiguous
/// input on their device (Cuda also bf16); otherwise libtorch ops.
at::Tensor silu_mul(const Backend& backend, const at::Tensor& gate_up, int64_t width);

}  // namespace izwi::ops
