#pragma once
// The RMSNorm dispatch point.

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// weight * x / sqrt(mean(x^2) + eps) over the last dim, computed in float32. Cpu and Cuda: the
/// fused kernel for float32 x and weight on their device; Cuda also for bf16 x with float32 or bf16
/// weight (result bf16); otherwise libtorch ops.
at::Tensor rms_norm(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, double eps);

/// The residual add of a layer's first half fused with the norm of its second: residual += x (in
/// place), then rms_norm of the sum. Cuda: one kernel for float32 tensors, or bf16 residual and x
/// with float32 or bf16 weight; otherwise the add, then rms_norm's dispatch.
at::Tensor add_rms_norm(const Backend& backend, at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                        double eps);

}  // namespace izwi::ops
