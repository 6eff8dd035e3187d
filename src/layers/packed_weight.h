#pragma once
// A weight matrix [out, in] repacked once, at load, for the CPU panel kernels
// (kernels/cpu/panel_linear_cpu.h). It replaces the row-major tensor: the layer keeps one copy.

#include <ATen/ATen.h>

#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {

class PackedWeight {
 public:
  PackedWeight() = default;

  /// True for the matrices the panel kernels take: 2-d float32 or bf16 on the CPU.
  static bool packable(const at::Tensor& weight);
  /// Packs a packable [out, in] matrix for `kernels`, which then multiply by it.
  static PackedWeight pack(const at::Tensor& weight, const PanelKernels& kernels);

  bool defined() const { return data_.defined(); }
  int64_t out_features() const { return out_; }
  int64_t in_features() const { return in_; }
  /// Bytes of weights a product reads (padding rows excluded).
  int64_t bytes() const;

  /// x [..., in] float32 -> [..., out] float32; bias [out] float32 or undefined.
  at::Tensor linear(const at::Tensor& x, const at::Tensor& bias) const;
  /// The same into `y`, contiguous float32 [rows of x, out].
  void linear_out(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& y) const;
  /// The product over inputs and outputs that lie where their strides say (PanelInputs,
  /// PanelOutputs): `tokens` rows of `in` inputs; bias [out] or null.
  void product(const PanelInputs& x, int64_t tokens, const float* bias, const PanelOutputs& y) const;
  /// Rows `ids` [n] (int64) as float32 [n, in], for a table shared with an embedding.
  at::Tensor rows(const at::Tensor& ids) const;

 private:
  at::Tensor data_;
  const PanelKernels* kernels_ = nullptr;
  WeightFormat format_ = WeightFormat::F32;
  int64_t out_ = 0;
  int64_t in_ = 0;
};

}  // namespace izwi
