#pragma once
// Reflect and replicate padding of the last dimension, in any dtype on any device: one gather
// through a computed index, so exact (values are copied). libtorch's reflection_pad1d has no bf16
// on the CPU in 1.13, and replication_pad1d none on CUDA before 2.3.

#include <ATen/ATen.h>

#include <cstdint>

namespace izwi::ops {

enum class Pad1dMode {
  Reflect,    ///< ... x2 x1 | x0 x1 x2 ... : the edge itself not repeated (torch's "reflect")
  Replicate,  ///< ... x0 x0 | x0 x1 x2 ... : the edge repeated (torch's "replicate")
};

/// x [..., length] -> [..., left + length + right]. Reflect needs left and right below length.
at::Tensor pad1d(const at::Tensor& x, int64_t left, int64_t right, Pad1dMode mode);

}  // namespace izwi::ops
