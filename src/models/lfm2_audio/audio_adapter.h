#pragma once
// LFM2-Audio's audio adapter (liquid-audio's MLP(encoder d_model, LM hidden, [LM hidden])):
// LayerNorm, Linear, exact GELU, Linear, all with biases. It maps FastConformer frames to the
// embeddings that take the place of token embeddings at audio-in positions.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "io/weight_source.h"

namespace izwi {

class Lfm2AudioAdapter {
 public:
  /// Takes `prefix`.0 (LayerNorm [in_dim]), `prefix`.1 (Linear in_dim -> out_dim) and `prefix`.3
  /// (Linear out_dim -> out_dim); index 2 is the GELU, which has no tensors. Runs on the source's
  /// backend, which must outlive it.
  Lfm2AudioAdapter(WeightSource& source, int64_t in_dim, int64_t out_dim,
                   const std::string& prefix = "audio_adapter.model");

  /// encoder frames [n, in_dim] -> embeddings [n, out_dim] in the source's compute dtype, on its
  /// device. Throws InvalidArgument for another shape.
  at::Tensor operator()(const at::Tensor& encoder_out) const;
  int64_t in_dim() const { return in_dim_; }
  int64_t out_dim() const { return out_dim_; }

 private:
  int64_t in_dim_, out_dim_;
  const Backend* backend_;  ///< the source's (WeightSource::backend)
  at::Tensor norm_weight_, norm_bias_;
  at::Tensor in_weight_, in_bias_, out_weight_, out_bias_;
};

}  // namespace izwi
