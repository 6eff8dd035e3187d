#include "quant/checkpoint_tensors.h"

#include <fmt/ranges.h>

#include <limits>

#include "common/check.h"

namespace izwi {

void require_present(const QuantLayer& layer, const StoredTensor& t) {
  if (!t.tensor.defined()) fail(ErrorCode::InvalidFormat, "{}: required tensor '{}' is missing", layer.origin, t.name);
}

void require_shape(const QuantLayer& layer, const StoredTensor& t, const std::vector<int64_t>& shape) {
  require_present(layer, t);
  if (t.tensor.sizes() != at::IntArrayRef(shape)) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has shape [{}] but a [{}, {}] layer needs [{}]", layer.origin,
         t.name, fmt::join(t.tensor.sizes(), ", "), layer.out, layer.in, fmt::join(shape, ", "));
  }
}

void require_dtype(const QuantLayer& layer, const StoredTensor& t, at::ScalarType dtype, const char* what) {
  require_present(layer, t);
  if (t.tensor.scalar_type() != dtype) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected {} ({})", layer.origin, t.name,
         at::toString(t.tensor.scalar_type()), at::toString(dtype), what);
  }
}

at::Tensor finite_scales(const QuantLayer& layer, const StoredTensor& t, float max_quantized) {
  require_present(layer, t);
  if (!at::isFloatingType(t.tensor.scalar_type())) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected floating-point scales", layer.origin, t.name,
         at::toString(t.tensor.scalar_type()));
  }
  at::Tensor scales = t.tensor.to(at::kFloat).contiguous();
  const int64_t bad = scales.numel() - at::isfinite(scales).sum().item<int64_t>();
  if (bad > 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' holds {} non-finite scale(s) (NaN or Inf)", layer.origin, t.name,
         bad);
  }
  // A finite scale can still make a weight infinite: the dequantized layer would be.
  const float largest = scales.numel() == 0 ? 0.0f : scales.abs().max().item<float>();
  if (largest > std::numeric_limits<float>::max() / max_quantized) {
    fail(ErrorCode::InvalidFormat,
         "{}: tensor '{}' holds the scale {}, whose weights (up to {} times it) overflow float32", layer.origin, t.name,
         largest, max_quantized);
  }
  return scales;
}

int64_t int4_group_size(const QuantLayer& layer, const StoredTensor& qweight, int64_t config_group_size) {
  // Eight 4-bit values fill an int32 word, along the input (GPTQ) or the output (AWQ, qzeros).
  if (layer.in % 8 != 0 || layer.out % 8 != 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' packs a [{}, {}] layer, whose sizes are not multiples of 8",
         layer.origin, qweight.name, layer.out, layer.in);
  }
  const int64_t group = config_group_size == -1 ? layer.in : config_group_size;
  if (group <= 0 || layer.in % group != 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': group_size {} does not divide the layer's {} input columns",
         layer.origin, qweight.name, group, layer.in);
  }
  return group;
}

at::Tensor unpack_nibbles(const at::Tensor& packed, const NibbleOrder& order) {
  std::vector<int64_t> shifts(order.begin(), order.end());
  for (int64_t& s : shifts) s *= 4;
  const at::Tensor shift = at::tensor(shifts, at::kInt);
  // Arithmetic shifts keep a negative word's sign bits above the nibble; the mask drops them.
  at::Tensor nibbles = at::bitwise_and(at::__rshift__(packed.to(at::kInt).unsqueeze(-1), shift), 15);
  std::vector<int64_t> shape = packed.sizes().vec();
  shape.back() *= 8;
  return nibbles.reshape(shape).to(at::kByte);
}

at::Tensor pack_nibble_pairs(const at::Tensor& q) {
  const at::Tensor pairs = q.reshape({q.size(0), q.size(1) / 2, 2});
  return at::bitwise_or(pairs.select(2, 0), at::__lshift__(pairs.select(2, 1), 4)).contiguous();
}

}  // namespace izwi
