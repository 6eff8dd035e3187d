#pragma once
// Token embedding table, kept in the weight storage dtype; looked-up rows are converted to the
// compute dtype. With tied weights the same table serves as the output projection.

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/linear.h"
#include "quant/quantize.h"

namespace izwi {

class Embedding {
 public:
  Embedding() = default;
  Embedding(WeightSource& source, const std::string& name, int64_t vocab_size, int64_t hidden_size);

  /// ids [T] int64 -> [T, hidden] in `dtype`.
  at::Tensor operator()(const at::Tensor& ids, at::ScalarType dtype) const;
  /// The table as a tied output projection. With `kernels` (and a table they take) the table is
  /// repacked for them first, quantized as `quantization` says, and lookups read the packed copy:
  /// one copy serves both.
  Linear tie_output_head(const PanelKernels* kernels, const WeightQuantization& quantization = {});

 private:
  at::Tensor table_;     ///< [vocab, hidden], unless packed
  PackedWeight packed_;  ///< the same table in the panel layout, when packed
};

/// The output projection: the embedding table when `tied` (a stored `<name>.weight` is then
/// skipped, as checkpoints sometimes save it anyway), otherwise `<name>.weight` itself.
Linear load_output_head(WeightSource& source, Embedding& embed, bool tied, const std::string& name, int64_t vocab_size,
                        int64_t hidden_size);

}  // namespace izwi
