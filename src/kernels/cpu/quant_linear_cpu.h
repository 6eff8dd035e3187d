#pragma once
// Linear layers over int8 / int4 weights packed once, at load, for the quantized kernels
// (quant_kernels.h): packing a QuantizedMatrix, quantizing the inputs per token row, and the
// product split among libtorch's threads.

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/cpu/quant_kernels.h"
#include "quant/quantized_matrix.h"

namespace izwi {

/// The layout `m` packs into; throws InvalidFormat naming `name` when m is not an Int8 / Int4
/// matrix the kernels take (shapes of values, scales, zeros and column_order; group size a multiple
/// of the block, 4 columns for int8 and 8 for int4, unless one group spans the row).
QuantLayout quant_layout(const QuantizedMatrix& m, const std::string& name);

/// `m` packed (uint8, (out rounded up to 16) / 16 * layout.panel_bytes() bytes).
at::Tensor pack_quantized(const QuantizedMatrix& m, const QuantLayout& layout);

/// y [tokens, out] = x W^T (+ bias) with x row-major [tokens, layout.in]; column_order (int64
/// [in] or null) is m.column_order: packed column k multiplies x column column_order[k].
void linear_quantized_cpu(const float* x, int64_t tokens, const int64_t* column_order, const uint8_t* packed,
                          const QuantLayout& layout, int64_t out, const float* bias, float* y,
                          const QuantKernels& kernels);

/// Rows `ids` of the packed matrix dequantized to float32 (an embedding lookup in a table packed
/// for the tied output head): dst [n, in] in the inputs' column order.
void gather_quantized_rows(const uint8_t* packed, const QuantLayout& layout, const int64_t* column_order,
                           const int64_t* ids, int64_t n, float* dst);

}  // namespace izwi
