#include "quant/dequantize.h"

#include <cmath>

#include "common/check.h"

namespace izwi {

at::Tensor decode_e4m3(const at::Tensor& bytes) {
  // Integer ops and a power of two built from its float bits: exact, on the bytes' device, with
  // nothing copied from the host (a host copy is not allowed while a CUDA graph captures).
  const at::Tensor b = bytes.to(at::kInt);
  const at::Tensor exponent = at::bitwise_and(at::__rshift__(b, 3), 15), mantissa = at::bitwise_and(b, 7);
  // (8 + m) * 2^(e - 10) for e >= 1; a subnormal (e == 0) is m * 2^-9, the same with no leading 8.
  const at::Tensor normal = exponent > 0;
  const at::Tensor significand = (mantissa + normal.to(at::kInt) * 8).to(at::kFloat);
  const at::Tensor power = at::__lshift__(at::clamp_min(exponent, 1) + (127 - 10), 23).view(at::kFloat);
  at::Tensor value = significand * power;
  value = at::where(at::bitwise_and(b, 0x80) != 0, -value, value);
  return at::where(at::logical_and(exponent == 15, mantissa == 7), at::full_like(value, NAN), value);
}

at::Tensor e4m3_table() { return decode_e4m3(at::arange(256, at::TensorOptions().dtype(at::kByte))); }

at::Tensor dequantize(const QuantizedMatrix& m) {
  IZWI_CHECK(m.group_size > 0 && m.in % m.group_size == 0, "a QuantizedMatrix's group size must divide its rows");
  // Each group's value over its columns; an expand, not repeat_interleave, which on a GPU reads its
  // output size back to the host (a sync, illegal while a CUDA graph captures a decode step).
  const auto per_column = [&](const at::Tensor& per_group) {
    const int64_t groups = per_group.size(1);
    return per_group.to(at::kFloat).unsqueeze(2).expand({m.out, groups, m.group_size}).reshape({m.out, m.in});
  };
  at::Tensor w;
  switch (m.kind) {
    case QuantKind::Int8:
      w = m.values.to(at::kFloat) * per_column(m.scales);
      break;
    case QuantKind::Int4: {
      const at::Tensor low = at::bitwise_and(m.values, 15), high = at::__rshift__(m.values, 4);
      const at::Tensor q = at::stack({low, high}, 2).reshape({m.out, m.in}).to(at::kFloat);
      const at::Tensor zeros =
          m.zeros.defined() ? per_column(m.zeros) : at::full({m.out, m.in}, 8.0f, m.scales.options().dtype(at::kFloat));
      w = (q - zeros) * per_column(m.scales);
      break;
    }
    case QuantKind::Fp8E4M3:
      w = decode_e4m3(m.values) * per_column(m.scales);
      break;
  }
  if (!m.column_order.defined()) return w.contiguous();
  // Column k of `values` is input column column_order[k].
  return at::empty_like(w).index_copy_(1, m.column_order, w);
}

}  // namespace izwi
