#pragma once
// The rotary-embedding dispatch point (rotate-half form: the first and second halves of each head
// are the pair's two coordinates).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// x [T, heads, head_dim] rotated by the angles of `positions` [T] (int64), into a new tensor.
/// Angles come from the tables cos / sin [max_positions, head_dim / 2] when they are defined,
/// else from inv_freq [head_dim / 2] (float32) and are cast to `dtype` as the tables would be.
/// Cpu and Cuda: one in-place pass over a copy for float32 x and tables (Cuda also from
/// inv_freq); otherwise libtorch ops.
at::Tensor rope(KernelBackend backend, const at::Tensor& x, const at::Tensor& positions, const at::Tensor& cos,
                const at::Tensor& sin, const at::Tensor& inv_freq, at::ScalarType dtype);

}  // namespace izwi::ops
