#include "layers/linear.h"

#include <algorithm>

#include "kernels/ops/linear_op.h"

namespace izwi {

Linear::Linear(at::Tensor weight, at::Tensor bias) : weight_(std::move(weight)), bias_(std::move(bias)) {}

Linear::Linear(PackedWeight weight, at::Tensor bias) : packed_(std::move(weight)), bias_(std::move(bias)) {}

int64_t Linear::weight_bytes() const {
  return packed_.defined() ? packed_.bytes() : weight_.numel() * static_cast<int64_t>(weight_.element_size());
}

Linear Linear::load(WeightSource& source, const std::string& prefix, int64_t out_features, int64_t in_features,
                    bool with_bias) {
  return load_stacked(source, {prefix}, {out_features}, in_features, with_bias);
}

Linear Linear::load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                            const std::vector<int64_t>& out_features, int64_t in_features, bool with_bias) {
  return load_stacked(source, prefixes, out_features, in_features, std::vector<bool>(prefixes.size(), with_bias));
}

Linear Linear::load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                            const std::vector<int64_t>& out_features, int64_t in_features,
                            const std::vector<bool>& with_bias) {
  const bool any_bias = std::find(with_bias.begin(), with_bias.end(), true) != with_bias.end();
  std::vector<at::Tensor> weights, biases;
  for (size_t i = 0; i < prefixes.size(); ++i) {
    weights.push_back(source.take_matrix(prefixes[i] + ".weight", {out_features[i], in_features}));
    if (with_bias[i]) {
      biases.push_back(source.take(prefixes[i] + ".bias", {out_features[i]}));
    } else if (any_bias) {
      biases.push_back(at::zeros({out_features[i]}, weights.back().options().dtype(source.compute_dtype())));
    }
  }
  at::Tensor weight = weights.size() == 1 ? weights[0] : at::cat(weights, 0);
  at::Tensor bias = !any_bias ? at::Tensor() : biases.size() == 1 ? biases[0] : at::cat(biases, 0);
  if (const PanelKernels* kernels = source.cpu_kernels(); kernels != nullptr && PackedWeight::packable(weight)) {
    return Linear(PackedWeight::pack(weight, *kernels), bias);
  }
  return Linear(weight, bias);
}

at::Tensor Linear::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  if (packed_.defined()) return packed_.linear(x, bias_);
  return ops::linear(*ctx.backend, x, weight_, bias_);
}

}  // namespace izwi
