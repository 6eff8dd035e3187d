#pragma once
// ConvNeXt block of the Qwen3-TTS codec upsampler: causal depthwise conv k7, LayerNorm (eps 1e-6)
// over channels, Linear dim->4*dim, exact GELU, Linear 4*dim->dim, per-channel gamma, residual.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "codec/causal_conv.h"

namespace izwi {

class Backend;
class WeightSource;

class ConvNeXtBlock {
 public:
  ConvNeXtBlock() = default;
  ConvNeXtBlock(WeightSource& weights, const std::string& prefix, int64_t dim);

  const CausalConv1d& dwconv() const { return dwconv_; }
  /// x [B, dim, T] -> [B, dim, T]; `dwconv_state` is the depthwise conv's streaming state.
  at::Tensor forward(const at::Tensor& x, at::Tensor& dwconv_state) const;
  int64_t weight_bytes() const;

 private:
  CausalConv1d dwconv_;
  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  at::Tensor norm_weight_, norm_bias_, pw1_weight_, pw1_bias_, pw2_weight_, pw2_bias_, gamma_;
};

}  // namespace izwi
