#pragma once
// Token embedding table, kept in the weight storage dtype; looked-up rows are converted to the
// compute dtype. With tied weights the same table serves as the output projection.

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/linear.h"

namespace izwi {

class Embedding {
 public:
  Embedding() = default;
  Embedding(WeightSource& source, const std::string& name, int64_t vocab_size, int64_t hidden_size);

  /// ids [T] int64 -> [T, hidden] in `dtype`.
  at::Tensor operator()(const at::Tensor& ids, at::ScalarType dtype) const;
  /// The table as an output projection (tied lm_head).
  Linear as_linear() const { return Linear(table_); }

 private:
  at::Tensor table_;  ///< [vocab, hidden]
};

}  // namespace izwi
