#pragma once
// The rotary-embedding dispatch point (rotate-half form: the first and second halves of each head
// are the pair's two coordinates).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// A rotary embedding's angles: the tables cos / sin [max_positions, head_dim / 2] when they are
/// defined, else inv_freq [head_dim / 2] (float32), the angles then cast to `dtype` as the tables
/// would be.
struct RopeAngles {
  at::Tensor cos;
  at::Tensor sin;
  at::Tensor inv_freq;
  at::ScalarType dtype = at::kFloat;
  /// Whether the float32 tables are there (what the fused kernels read).
  bool float32_tables() const { return cos.defined() && cos.scalar_type() == at::kFloat; }
};

/// x [T, heads, head_dim] rotated by the angles of `positions` [T] (int64), into a new tensor.
/// Cpu and Cuda: one in-place pass over a copy for float32 x and tables (Cuda also from
/// inv_freq, and bf16 x with float32 or bf16 tables or, for a bf16 dtype, inv_freq); otherwise
/// libtorch ops.
at::Tensor rope(const Backend& backend, const at::Tensor& x, const at::Tensor& positions, const RopeAngles& angles);

}  // namespace izwi::ops
