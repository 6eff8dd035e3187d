#pragma once
// A weight matrix [out, in] held in fewer bits than bf16: the one form that every quantized
// source produces (GPTQ / AWQ / FP8 checkpoints as released, or EngineConfig::weight_dtype int8 /
// int4 made at load) and that the kernels' packers take. Keeping one form lets a new checkpoint
// format add a reader and no kernel, and a new kernel add a packer and no reader.

#include <ATen/ATen.h>

#include <cstdint>

namespace izwi {

enum class QuantKind {
  Int8,     ///< symmetric: w = q * scale, q in [-127, 127]
  Int4,     ///< w = (q - zero) * scale, q and zero in [0, 15] (zero 8 when symmetric)
  Fp8E4M3,  ///< w = fp8_e4m3(q) * scale
};

struct QuantizedMatrix {
  QuantKind kind = QuantKind::Int8;
  int64_t out = 0;
  int64_t in = 0;
  /// Consecutive columns (in `values`' order) sharing one scale and zero point; `in` when per
  /// output channel.
  int64_t group_size = 0;
  /// Int8: int8 [out, in]. Int4: uint8 [out, in / 2], column 2j in the low nibble and 2j + 1 in
  /// the high one. Fp8E4M3: uint8 [out, in], the e4m3 bits.
  at::Tensor values;
  /// float32 [out, in / group_size] (a per-tensor scale is written out per row).
  at::Tensor scales;
  /// Int4 only: uint8 [out, in / group_size] zero points; undefined means 8 everywhere.
  at::Tensor zeros;
  /// int64 [in] or undefined: column k of `values` multiplies input column column_order[k] (GPTQ's
  /// act-order, whose groups are contiguous only after this permutation).
  at::Tensor column_order;

  /// Bytes held: values, scales, zero points and column order.
  int64_t bytes() const {
    int64_t total = 0;
    for (const at::Tensor* t : {&values, &scales, &zeros, &column_order}) {
      if (t->defined()) total += static_cast<int64_t>(t->nbytes());
    }
    return total;
  }
  /// The same matrix with its tensors contiguous on `device` (a device's kernels read it there).
  QuantizedMatrix to(const at::Device& device) const {
    QuantizedMatrix moved = *this;
    for (at::Tensor* t : {&moved.values, &moved.scales, &moved.zeros, &moved.column_order}) {
      if (t->defined()) *t = t->to(device).contiguous();
    }
    return moved;
  }
};

}  // namespace izwi
