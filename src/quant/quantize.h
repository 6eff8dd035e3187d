#pragma once
// Quantize at load (EngineConfig::weight_dtype int8 / int4): a floating-point matrix [out, in] to
// the QuantizedMatrix the kernels pack, in llama.cpp's Q8_0 / Q4_0 quality class.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "quant/quantized_matrix.h"

namespace izwi {

/// How matrices are quantized at load; kind unset = they stay floating point.
struct WeightQuantization {
  bool enabled = false;
  QuantKind kind = QuantKind::Int8;
  int64_t group_size = 0;  ///< int4: columns per scale (32 or 64); int8: per output channel

  static constexpr int64_t kDefaultInt4Group = 32;
  /// Parses "int8", "int4", "int4:32" or "int4:64"; anything else (floating-point dtypes, "auto")
  /// is disabled. InvalidArgument naming `field` for an int4 group other than 32 or 64.
  static WeightQuantization parse(const std::string& name, const std::string& field);
};

/// int8, symmetric per output channel: scale = max |w_row| / 127, q = round(w / scale) in
/// [-127, 127]; |w - q * scale| <= scale / 2.
QuantizedMatrix quantize_int8(const at::Tensor& weight);

/// int4, symmetric per group of `group_size` consecutive columns (the last group may be shorter):
/// scale = max |w_group| / 7, q = round(w / scale) + 8 in [1, 15], zero point 8 (zeros undefined);
/// |w - (q - 8) * scale| <= scale / 2.
QuantizedMatrix quantize_int4(const at::Tensor& weight, int64_t group_size);

/// quantize_int8 or quantize_int4 as `how` says (enabled).
QuantizedMatrix quantize(const at::Tensor& weight, const WeightQuantization& how);

}  // namespace izwi
