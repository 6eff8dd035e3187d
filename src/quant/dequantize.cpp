#include "quant/dequantize.h"

#include <cmath>
#include <limits>

#include "common/check.h"

namespace izwi {

at::Tensor e4m3_table() {
  at::Tensor table = at::empty({256}, at::kFloat);
  float* v = table.data_ptr<float>();
  for (int b = 0; b < 256; ++b) {
    const int exponent = (b >> 3) & 15, mantissa = b & 7;
    float magnitude;
    if (exponent == 15 && mantissa == 7) {
      magnitude = std::numeric_limits<float>::quiet_NaN();
    } else if (exponent == 0) {
      magnitude = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m / 8 * 2^-6
    } else {
      magnitude = std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);  // (1 + m / 8) * 2^(e - 7)
    }
    v[b] = (b & 0x80) != 0 ? -magnitude : magnitude;
  }
  return table;
}

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
      w = e4m3_table()
              .to(m.values.device())
              .index_select(0, m.values.reshape(-1).to(at::kLong))
              .reshape({m.out, m.in}) *
          per_column(m.scales);
      break;
  }
  if (!m.column_order.defined()) return w.contiguous();
  // Column k of `values` is input column column_order[k].
  return at::empty_like(w).index_copy_(1, m.column_order, w);
}

}  // namespace izwi
