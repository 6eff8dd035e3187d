#include "quant/awq_reader.h"

namespace izwi {

namespace {

// Where AutoAWQ's pack order [0, 2, 4, 6, 1, 3, 5, 7] put each of 8 consecutive output columns.
constexpr NibbleOrder kAwqNibbles = {0, 4, 1, 5, 2, 6, 3, 7};

}  // namespace

QuantizedMatrix read_awq(const QuantLayer& layer, const AwqTensors& t, const QuantizationConfig& config) {
  require_present(layer, t.qweight);
  const int64_t group = int4_group_size(layer, t.qweight, config.group_size);
  const int64_t groups = layer.in / group;
  require_shape(layer, t.qweight, {layer.in, layer.out / 8});
  require_dtype(layer, t.qweight, at::kInt, "8 packed int4 weights per word");
  require_shape(layer, t.qzeros, {groups, layer.out / 8});
  require_dtype(layer, t.qzeros, at::kInt, "8 packed int4 zero points per word");
  require_shape(layer, t.scales, {groups, layer.out});
  const at::Tensor scales = finite_scales(layer, t.scales, 15.0f);

  QuantizedMatrix m;
  m.kind = QuantKind::Int4;
  m.out = layer.out;
  m.in = layer.in;
  m.group_size = group;
  m.values = transpose_packed_words(t.qweight.tensor, kAwqNibbles);
  m.scales = scales.t().contiguous();
  m.zeros = unpack_nibbles(t.qzeros.tensor, kAwqNibbles).t().contiguous();
  return m;
}

}  // namespace izwi
