#include "quant/quantize.h"

#include "common/check.h"

namespace izwi {

namespace {

// w [out, in] as float32 groups [out, groups, group_size], the last group padded with zeros (which
// neither raise a group's maximum nor survive the narrow() back to in columns).
at::Tensor grouped(const at::Tensor& weight, int64_t group_size) {
  IZWI_CHECK(weight.dim() == 2 && group_size > 0, "quantize: expected a 2-d matrix and a positive group size");
  const int64_t out = weight.size(0), in = weight.size(1), groups = (in + group_size - 1) / group_size;
  at::Tensor w = weight.to(at::kFloat).contiguous();
  if (groups * group_size != in) w = at::constant_pad_nd(w, {0, groups * group_size - in});
  return w.view({out, groups, group_size});
}

}  // namespace

WeightQuantization WeightQuantization::parse(const std::string& name, const std::string& field) {
  WeightQuantization how;
  if (name == "int8") {
    how.enabled = true;
    how.kind = QuantKind::Int8;
  } else if (name.rfind("int4", 0) == 0 && (name.size() == 4 || name[4] == ':')) {
    how.enabled = true;
    how.kind = QuantKind::Int4;
    how.group_size = kDefaultInt4Group;
    if (name.size() > 4) {
      const std::string group = name.substr(5);
      if (group != "32" && group != "64") {
        fail(ErrorCode::InvalidArgument, "{} '{}': the int4 group size must be 32 or 64 (int4:32, int4:64)", field,
             name);
      }
      how.group_size = std::stoll(group);
    }
  }
  return how;
}

QuantizedMatrix quantize_int8(const at::Tensor& weight) {
  const int64_t in = weight.size(1);
  const at::Tensor w = grouped(weight, in).squeeze(1);
  const at::Tensor scales = w.abs().amax(1, true) / 127.0f;
  QuantizedMatrix m;
  m.kind = QuantKind::Int8;
  m.out = weight.size(0);
  m.in = in;
  m.group_size = in;
  // An all-zero row keeps scale 0 and q 0 (dividing by 1 instead of 0).
  m.values = (w / at::where(scales > 0, scales, at::ones_like(scales))).round().clamp(-127, 127).to(at::kChar);
  m.scales = scales.contiguous();
  return m;
}

QuantizedMatrix quantize_int4(const at::Tensor& weight, int64_t group_size) {
  const int64_t out = weight.size(0), in = weight.size(1);
  const at::Tensor w = grouped(weight, group_size);
  const at::Tensor scales = w.abs().amax(2, true) / 7.0f;
  const at::Tensor q = (w / at::where(scales > 0, scales, at::ones_like(scales))).round().clamp(-7, 7) + 8;
  at::Tensor columns = q.view({out, -1}).narrow(1, 0, in).to(at::kByte);
  if (in % 2 != 0) columns = at::constant_pad_nd(columns, {0, 1});
  const at::Tensor pairs = columns.view({out, -1, 2});
  QuantizedMatrix m;
  m.kind = QuantKind::Int4;
  m.out = out;
  m.in = in;
  m.group_size = group_size;
  m.values = (pairs.select(2, 0) | pairs.select(2, 1) * 16).contiguous();
  m.scales = scales.squeeze(2).contiguous();
  return m;
}

QuantizedMatrix quantize(const at::Tensor& weight, const WeightQuantization& how) {
  IZWI_CHECK(how.enabled, "quantize: no quantization requested");
  return how.kind == QuantKind::Int8 ? quantize_int8(weight) : quantize_int4(weight, how.group_size);
}

}  // namespace izwi
