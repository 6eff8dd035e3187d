#include "layers/embedding.h"

namespace izwi {

Embedding::Embedding(WeightSource& source, const std::string& name, int64_t vocab_size, int64_t hidden_size)
    : table_(source.take_matrix(name, {vocab_size, hidden_size})) {}

at::Tensor Embedding::operator()(const at::Tensor& ids, at::ScalarType dtype) const {
  return table_.index_select(0, ids).to(dtype);
}

}  // namespace izwi
