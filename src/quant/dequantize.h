#pragma once
// A QuantizedMatrix back to float: the reference every quantized kernel is checked against, and
// what a layer without a quantized kernel runs on.

#include <ATen/ATen.h>

#include "quant/quantized_matrix.h"

namespace izwi {

/// float32 [out, in] in the original input column order (column_order undone): one float32
/// multiply per element, (q - zero) * scale for int4, q * scale for int8, e4m3(q) * scale for FP8;
/// on the matrix's device.
at::Tensor dequantize(const QuantizedMatrix& m);

/// The float value of each e4m3fn byte of `bytes` (uint8, any shape and device; NaN for 0x7f and
/// 0xff), float32 of the same shape, exactly.
at::Tensor decode_e4m3(const at::Tensor& bytes);

/// decode_e4m3 of every byte 0x00..0xff, float32 [256].
at::Tensor e4m3_table();

}  // namespace izwi
