#pragma once
// A weight matrix [out, in] repacked once, at load, for the CPU panel kernels
// (kernels/cpu/panel_linear_cpu.h), or, quantized (int8 / int4), for the quantized kernels that go
// with them (kernels/cpu/quant_kernels.h). It replaces the row-major tensor: the layer keeps one copy.

#include <ATen/ATen.h>

#include <string>

#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/panel_kernels.h"
#include "kernels/cpu/quant_kernels.h"
#include "quant/quantized_matrix.h"

namespace izwi {

class PackedWeight {
 public:
  PackedWeight() = default;

  /// True for the matrices the panel kernels take: 2-d float32 or bf16 on the CPU.
  static bool packable(const at::Tensor& weight);
  /// Packs a packable [out, in] matrix for `kernels`, which then multiply by it.
  static PackedWeight pack(const at::Tensor& weight, const PanelKernels& kernels);
  /// Packs an int8 / int4 matrix for the quantized kernels of `kernels`' instruction set; errors
  /// name `name` (InvalidFormat for a malformed matrix, Unsupported for fp8).
  static PackedWeight pack(const QuantizedMatrix& weight, const PanelKernels& kernels, const std::string& name);

  bool defined() const { return data_.defined(); }
  int64_t out_features() const { return out_; }
  int64_t in_features() const { return in_; }
  /// I8 / I4 when quantized.
  WeightFormat format() const { return format_; }
  /// Bytes of weights a product reads (padding rows excluded; with a quantized matrix's scales).
  int64_t bytes() const;

  /// x [..., in] float32 -> [..., out] float32; bias [out] float32 or undefined.
  at::Tensor linear(const at::Tensor& x, const at::Tensor& bias) const;
  /// The same into `y`, contiguous float32 [rows of x, out].
  void linear_out(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& y) const;
  /// The product over inputs and outputs that lie where their strides say (PanelInputs,
  /// PanelOutputs): `tokens` rows of `in` inputs; bias [out] or null. Float weights only (the
  /// convolutions that call it keep theirs float).
  void product(const PanelInputs& x, int64_t tokens, const float* bias, const PanelOutputs& y) const;
  /// Rows `ids` [n] (int64) as float32 [n, in], for a table shared with an embedding.
  at::Tensor rows(const at::Tensor& ids) const;

 private:
  at::Tensor data_;
  const PanelKernels* kernels_ = nullptr;
  WeightFormat format_ = WeightFormat::F32;
  int64_t out_ = 0;
  int64_t in_ = 0;
  // Quantized matrices only.
  const QuantKernels* quant_kernels_ = nullptr;
  QuantLayout quant_layout_;
  at::Tensor column_order_;

  bool quantized() const { return quant_kernels_ != nullptr; }
};

}  // namespace izwi
