#include "layers/linear.h"

namespace izwi {

Linear Linear::load(WeightLoader& loader, const std::string& prefix, int64_t out_features, int64_t in_features,
                    bool with_bias) {
  Linear linear;
  linear.weight = loader.take(prefix + ".weight", {out_features, in_features});
  if (with_bias) linear.bias = loader.take(prefix + ".bias", {out_features});
  return linear;
}

at::Tensor Linear::operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }

}  // namespace izwi
