#pragma once
// y = x W^T + b with weights as Hugging Face stores them ([out, in]). The weight may be kept in a
// narrower storage dtype (bf16) than the activations; the CPU kernel converts on the fly.

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "io/weight_source.h"
#include "layers/packed_weight.h"
#include "layers/step/forward_context.h"

namespace izwi {

class Linear {
 public:
  Linear() = default;
  /// weight [out, in] in its storage dtype; bias [out] in the compute dtype or undefined.
  explicit Linear(at::Tensor weight, at::Tensor bias = {});
  /// Weights packed for the CPU panel kernels; bias [out] float32 or undefined.
  explicit Linear(PackedWeight weight, at::Tensor bias = {});
  /// A quantized matrix kept as it is on its device (int4 / FP8 on CUDA: ops::linear_quantized);
  /// bias [out] in the compute dtype or undefined.
  explicit Linear(QuantizedMatrix weight, at::Tensor bias = {});

  /// Loads `<prefix>.weight` (and `<prefix>.bias` when `with_bias`), packed for the CPU kernels
  /// when the source names CPU kernels (WeightSource::cpu_kernels). A quantized matrix (the
  /// checkpoint's, or weight_dtype int8 / int4) is packed for the CPU's quantized kernels, kept
  /// quantized on a device whose kernels take it (ops::keeps_quantized: int4 and Hopper FP8 on
  /// CUDA), else dequantized once to the weight dtype. Adds the bytes it keeps to the load's
  /// ResidentWeightBytes.
  static Linear load(WeightSource& source, const std::string& prefix, int64_t out_features, int64_t in_features,
                     bool with_bias);
  /// Several projections of the same input stacked into one matrix, so one pass over the input
  /// serves them all (q/k/v, gate/up). Split the output with narrow() at `out_features` offsets.
  static Linear load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                             const std::vector<int64_t>& out_features, int64_t in_features, bool with_bias);
  /// Same, with a bias flag per projection; a projection without bias contributes zeros.
  static Linear load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                             const std::vector<int64_t>& out_features, int64_t in_features,
                             const std::vector<bool>& with_bias);

  /// x: [T, in] -> [T, out]
  at::Tensor operator()(const at::Tensor& x, const ForwardContext& ctx) const;
  /// The same outside a step (a depth decoder's inner loop), with `backend`'s ops.
  at::Tensor operator()(const at::Tensor& x, const Backend& backend) const;

  /// Bytes of the weight matrix held (a quantized one with its scales and zero points).
  int64_t weight_bytes() const;

 private:
  at::Tensor weight_;          ///< row-major [out, in], unless packed
  PackedWeight packed_;        ///< the panel layout, when packed
  QuantizedMatrix quantized_;  ///< kept quantized on a device, when its values are defined
  at::Tensor bias_;
};

}  // namespace izwi
