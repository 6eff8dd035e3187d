#pragma once
// y = x W^T + b, weights as Hugging Face stores them ([out, in]).

#include <ATen/ATen.h>

#include <string>

#include "io/weight_loader.h"

namespace izwi {

struct Linear {
  at::Tensor weight;  ///< [out, in]
  at::Tensor bias;    ///< [out] or undefined

  /// Loads `<prefix>.weight` (and `<prefix>.bias` when `with_bias`).
  static Linear load(WeightLoader& loader, const std::string& prefix, int64_t out_features, int64_t in_features,
                     bool with_bias);
  /// x: [..., in] -> [..., out]
  at::Tensor operator()(const at::Tensor& x) const;
};

}  // namespace izwi
