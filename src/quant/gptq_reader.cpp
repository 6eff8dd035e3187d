#include "quant/gptq_reader.h"

#include "common/check.h"

namespace izwi {

namespace {

// g_idx maps every input row to a group, and act-order only reorders rows: each group must still
// hold exactly `group` rows, or the groups would not be contiguous after sorting.
at::Tensor checked_groups(const QuantLayer& layer, const StoredTensor& g_idx, int64_t groups, int64_t group) {
  require_shape(layer, g_idx, {layer.in});
  if (g_idx.tensor.scalar_type() != at::kInt && g_idx.tensor.scalar_type() != at::kLong) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected int32 group indices", layer.origin,
         g_idx.name, at::toString(g_idx.tensor.scalar_type()));
  }
  const at::Tensor idx = g_idx.tensor.to(at::kLong);
  const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
  if (lo < 0 || hi >= groups) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' holds group {}, outside [0, {})", layer.origin, g_idx.name,
         lo < 0 ? lo : hi, groups);
  }
  const at::Tensor counts = at::bincount(idx, {}, groups);
  if (!counts.eq(group).all().item<bool>()) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' is not a valid group map: every group must hold {} rows",
         layer.origin, g_idx.name, group);
  }
  return idx;
}

}  // namespace

QuantizedMatrix read_gptq(const QuantLayer& layer, const GptqTensors& t, const QuantizationConfig& config) {
  require_present(layer, t.qweight);
  const int64_t group = int4_group_size(layer, t.qweight, config.group_size);
  const int64_t groups = layer.in / group;
  require_shape(layer, t.qweight, {layer.in / 8, layer.out});
  require_dtype(layer, t.qweight, at::kInt, "8 packed int4 weights per word");
  require_shape(layer, t.qzeros, {groups, layer.out / 8});
  require_dtype(layer, t.qzeros, at::kInt, "8 packed int4 zero points per word");
  require_shape(layer, t.scales, {groups, layer.out});
  const at::Tensor scales = finite_scales(layer, t.scales, 15.0f);

  at::Tensor zeros = unpack_nibbles(t.qzeros.tensor, kSequentialNibbles);  // [groups, out]
  if (config.zeros_minus_one) {
    zeros = zeros.to(at::kShort) + 1;
    if (zeros.max().item<int64_t>() > 15) {
      fail(ErrorCode::InvalidFormat,
           "{}: tensor '{}' holds a stored zero point 15, which the gptq v1 format's +1 makes 16, outside [0, 15]",
           layer.origin, t.qzeros.name);
    }
    zeros = zeros.to(at::kByte);
  }

  QuantizedMatrix m;
  m.kind = QuantKind::Int4;
  m.out = layer.out;
  m.in = layer.in;
  m.group_size = group;
  // Row o of qweight's transpose holds input columns 8k..8k+7 of output o in word k, nibble j at
  // bits [4j, 4j + 4): as bytes, exactly QuantizedMatrix's pairs (2j low, 2j + 1 high).
  const at::Tensor by_output = t.qweight.tensor.t().contiguous();  // int32 [out, in / 8]
  if (t.g_idx.tensor.defined()) {
    const at::Tensor idx = checked_groups(layer, t.g_idx, groups, group);
    if (!idx.equal(at::arange(layer.in, at::kLong).div(group, "floor"))) {
      m.column_order = std::get<1>(at::sort(idx, /*stable=*/true, 0, false));
    }
  } else if (config.desc_act) {
    require_present(layer, t.g_idx);  // act-order without its map
  }
  m.values = by_output.view(at::kByte);
  if (m.column_order.defined()) m.values = gather_pair_columns(m.values, m.column_order);
  m.scales = scales.t().contiguous();
  m.zeros = zeros.t().contiguous();
  return m;
}

}  // namespace izwi
