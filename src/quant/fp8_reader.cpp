#include "quant/fp8_reader.h"

#include <fmt/ranges.h>

#include "common/check.h"

namespace izwi {

QuantizedMatrix read_fp8(const QuantLayer& layer, const Fp8Tensors& t) {
  require_shape(layer, t.weight, {layer.out, layer.in});
  require_dtype(layer, t.weight, at::kByte, "float8_e4m3fn bits");
  // e4m3fn has no Inf; its only NaNs are S.1111.111.
  const int64_t nans = at::bitwise_and(t.weight.tensor, 0x7f).eq(0x7f).sum().item<int64_t>();
  if (nans > 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' holds {} NaN weight(s)", layer.origin, t.weight.name, nans);
  }
  const at::Tensor scale = finite_scales(layer, t.weight_scale, 448.0f);
  const at::IntArrayRef shape = scale.sizes();
  const bool per_tensor = scale.numel() == 1 && shape.size() <= 1;
  const bool per_channel =
      (shape.size() == 1 && shape[0] == layer.out) || (shape.size() == 2 && shape[0] == layer.out && shape[1] == 1);
  if (!per_tensor && !per_channel) {
    fail(ErrorCode::InvalidFormat,
         "{}: tensor '{}' has shape [{}]; a [{}, {}] layer takes one scale ([] or [1]) or one per output channel "
         "([{}, 1])",
         layer.origin, t.weight_scale.name, fmt::join(shape, ", "), layer.out, layer.in, layer.out);
  }
  QuantizedMatrix m;
  m.kind = QuantKind::Fp8E4M3;
  m.out = layer.out;
  m.in = layer.in;
  m.group_size = layer.in;
  m.values = t.weight.tensor.contiguous();
  m.scales = scale.reshape({-1, 1}).expand({layer.out, 1}).contiguous();
  return m;
}

}  // namespace izwi
