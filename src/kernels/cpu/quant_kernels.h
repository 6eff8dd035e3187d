#pragma once
// Linear kernels over int8 and int4 weights (WeightFormat::I8, I4), compiled once per instruction
// set (AVX-512 VNNI, AVX2, portable) like the float panel kernels (panel_kernels.h) and chosen
// from the panel-kernel variant a matrix is packed for.
//
// Arithmetic: the inputs of each token row are quantized on the fly to int8 with one scale per row
// (x ~ xq * sx, |xq| <= 127), weights are held unsigned (u = q + 128 for int8, u = q in [0, 15]
// for int4) with a zero point z per row and group (128 for int8; 8 or the checkpoint's for int4),
// so sum_k w_k x_k = sx * sum_groups scale_g * (sum_{k in g} u_k xq_k - z_g * sum_{k in g} xq_k):
// an int32 dot product per group (vpdpbusd takes unsigned x signed bytes), a float accumulation
// across groups, and the zero points through the per-group sum of the quantized inputs.
//
// Packed layout: W [out, in] is cut into panels of 16 rows (the last padded with rows of scale 0).
// A panel holds its groups one after the other; group g is a header, then blocks of columns:
//   header: int8: 16 float32 row scales; int4: 16 fp16 row scales, then 16 uint8 zero points when
//           the matrix has its own (else every zero point is 8);
//   blocks: int8: 4 columns per block, byte 4 * i + j = u[row i][column 4 b + j] (64 bytes);
//           int4: 8 columns per block, byte 4 * i + j = u[i][8 b + j] | u[i][8 b + 4 + j] << 4.
// Every group but the last holds group_size columns (a multiple of the block); the last, and the
// only group of a per-channel matrix, is padded to whole blocks (padding weights meet zero inputs).

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/linear_cpu.h"

namespace izwi {

constexpr int64_t kQuantPanelRows = 16;
constexpr int64_t kQuantBlockBytes = 64;

/// Where a quantized panel keeps what (see above).
struct QuantLayout {
  WeightFormat format = WeightFormat::I8;  ///< I8 or I4
  int64_t in = 0;
  int64_t group_size = 0;  ///< columns per scale; >= in for one group per row
  bool zeros = false;      ///< I4 only: zero points stored per row and group

  int64_t block_columns() const { return format == WeightFormat::I8 ? 4 : 8; }
  int64_t groups() const { return group_size >= in ? 1 : (in + group_size - 1) / group_size; }
  /// Columns of group g in the panel (padded to whole blocks).
  int64_t group_columns(int64_t g) const {
    const int64_t start = g * group_size, columns = group_size >= in ? in : std::min(group_size, in - start);
    return (columns + block_columns() - 1) / block_columns() * block_columns();
  }
  /// in rounded up to whole blocks: the length of a row of quantized inputs.
  int64_t padded_in() const { return (in + block_columns() - 1) / block_columns() * block_columns(); }
  int64_t header_bytes() const {
    return format == WeightFormat::I8 ? kQuantPanelRows * 4 : kQuantPanelRows * 2 + (zeros ? kQuantPanelRows : 0);
  }
  int64_t group_bytes(int64_t g) const {
    return header_bytes() + group_columns(g) / block_columns() * kQuantBlockBytes;
  }
  /// Every group but the last has the bytes of group 0.
  int64_t group_offset(int64_t g) const { return g * group_bytes(0); }
  int64_t panel_bytes() const { return group_offset(groups() - 1) + group_bytes(groups() - 1); }
};

/// One y = x W^T + b over quantized weights and inputs quantized per token row.
struct QuantProduct {
  const int8_t* x = nullptr;        ///< [tokens, layout.padded_in()], zero past in
  const int32_t* x_sums = nullptr;  ///< [tokens, layout.groups()]: sums of x over each group
  const float* x_scales = nullptr;  ///< [tokens]
  int64_t tokens = 0;
  const uint8_t* packed = nullptr;  ///< panels of layout.panel_bytes()
  QuantLayout layout;
  int64_t out = 0;
  const float* bias = nullptr;  ///< [out] or null
  float* y = nullptr;           ///< [tokens, y_stride], columns [0, out) written
  int64_t y_stride = 0;
};

struct QuantKernels {
  const char* name;  ///< "avx512_vnni", "avx2" or "portable"
  /// Computes the outputs of panels [panel_begin, panel_end) on the calling thread.
  void (*run)(const QuantProduct& product, int64_t panel_begin, int64_t panel_end);
};

const QuantKernels& quant_kernels_avx512_vnni();
const QuantKernels& quant_kernels_avx2();
const QuantKernels& quant_kernels_portable();

struct PanelKernels;
/// The quantized kernels that go with a panel-kernel variant: its instruction set's (AVX-512
/// variants take VNNI where the CPU has it, else AVX2), so naming a panel variant (IZWI_CPU_KERNELS,
/// EngineConfig::cpu_kernels, tests) names the quantized one too.
const QuantKernels& quant_kernels_for(const PanelKernels& kernels);

}  // namespace izwi
