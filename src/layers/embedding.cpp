#include "layers/embedding.h"

namespace izwi {

Embedding::Embedding(WeightSource& source, const std::string& name, int64_t vocab_size, int64_t hidden_size)
    : table_(source.take_matrix(name, {vocab_size, hidden_size})) {}

at::Tensor Embedding::operator()(const at::Tensor& ids, at::ScalarType dtype) const {
  return table_.index_select(0, ids).to(dtype);
}

Linear load_output_head(WeightSource& source, const Embedding& embed, bool tied, const std::string& name,
                        int64_t vocab_size, int64_t hidden_size) {
  if (!tied) return Linear::load(source, name, vocab_size, hidden_size, false);
  if (source.contains(name + ".weight")) source.skip(name + ".weight");
  return Linear(embed.table());
}

}  // namespace izwi
