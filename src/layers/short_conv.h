#pragma once
// LFM2's gated short convolution: in_proj -> (B, C, x) -> B*x -> depthwise causal conv over the
// last `kernel` inputs -> C * conv -> out_proj. The last kernel-1 inputs of B*x are the state a
// sequence carries between steps; a copy is kept at every block boundary for prefix caching.

#include <ATen/ATen.h>

#include <string>

#include "io/weight_source.h"
#include "layers/linear.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"

namespace izwi {

class ShortConv {
 public:
  ShortConv(WeightSource& source, const std::string& prefix, int64_t hidden_size, int64_t kernel_size, bool bias);

  /// x: [T, hidden] -> [T, hidden]
  at::Tensor operator()(const at::Tensor& x, LayerCache& cache, const ForwardContext& ctx) const;

  LayerCacheSpec cache_spec() const;
  int64_t weight_bytes() const { return in_proj_.weight_bytes() + out_proj_.weight_bytes(); }

 private:
  int64_t hidden_size_;
  int64_t kernel_size_;
  Linear in_proj_, out_proj_;
  at::Tensor conv_weight_;  ///< [kernel, hidden]
  at::Tensor conv_bias_;    ///< [hidden] or undefined
};

}  // namespace izwi
