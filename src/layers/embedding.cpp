#include "layers/embedding.h"

#include "kernels/backend.h"

namespace izwi {

Embedding::Embedding(WeightSource& source, const std::string& name, int64_t vocab_size, int64_t hidden_size)
    : table_(source.take_matrix(name, {vocab_size, hidden_size})) {}

at::Tensor Embedding::operator()(const at::Tensor& ids, at::ScalarType dtype) const {
  if (packed_.defined()) return packed_.rows(ids).to(dtype);
  return table_.index_select(0, ids).to(dtype);
}

Linear Embedding::tie_output_head(const PanelKernels* kernels, const WeightQuantization& quantization) {
  if (kernels != nullptr && !packed_.defined() && PackedWeight::packable(table_)) {
    // Quantized, the head reads 2-4x fewer bytes; lookups then read the same quantized rows.
    packed_ = quantization.enabled ? PackedWeight::pack(quantize(table_, quantization), *kernels, "tied output head")
                                   : PackedWeight::pack(table_, *kernels);
    // The load counted the table as taken; the packed copy replaces it.
    ResidentWeightBytes::add(packed_.bytes() - static_cast<int64_t>(table_.nbytes()));
    table_ = at::Tensor();
  }
  return packed_.defined() ? Linear(packed_) : Linear(table_);
}

Linear load_output_head(WeightSource& source, Embedding& embed, bool tied, const std::string& name, int64_t vocab_size,
                        int64_t hidden_size) {
  if (!tied) return Linear::load(source, name, vocab_size, hidden_size, false);
  if (source.contains(name + ".weight")) source.skip(name + ".weight");
  return embed.tie_output_head(source.cpu_kernels(), source.backend().weight_quantization());
}

}  // namespace izwi
