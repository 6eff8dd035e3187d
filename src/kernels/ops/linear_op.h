#pragma once
// The linear-layer dispatch point for weights kept row-major ([out, in], as Hugging Face stores
// them): the codecs, the depthformer and any Linear not packed at load. Packed weights have their
// own product (layers/packed_weight.h).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// y = x W^T + b over the last dim of x (any leading dims). Cpu: linear_cpu for float32 x and
/// contiguous float32 or bf16 W (every intra-op thread, whatever BLAS's own thread count); all
/// other cases at::linear (cuBLAS on CUDA) with W converted to x's dtype.
at::Tensor linear(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace izwi::ops
