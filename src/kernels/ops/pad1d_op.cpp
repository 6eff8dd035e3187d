#include "kernels/ops/pad1d_op.h"

#include "common/check.h"

namespace izwi::ops {

at::Tensor pad1d(const at::Tensor& x, int64_t left, int64_t right, Pad1dMode mode) {
  const int64_t length = x.size(-1);
  IZWI_CHECK(left >= 0 && right >= 0, "pad1d: negative padding ({}, {})", left, right);
  IZWI_CHECK(length > 0, "pad1d: nothing to pad from (length 0)");
  if (left == 0 && right == 0) return x;
  IZWI_CHECK(mode != Pad1dMode::Reflect || (left < length && right < length),
             "pad1d: reflect padding of ({}, {}) needs more than {} samples", left, right, length);
  const at::Tensor position = at::arange(-left, length + right, x.options().dtype(at::kLong));
  const int64_t last = length - 1;
  // Reflect: -i before the start, 2 * last - i past the end; replicate: the nearest edge.
  const at::Tensor source = mode == Pad1dMode::Reflect ? last - (last - position.abs()).abs() : position.clamp(0, last);
  return x.index_select(-1, source);
}

}  // namespace izwi::ops
