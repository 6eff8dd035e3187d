#pragma once
// SwiGLU feed-forward: down(silu(gate(x)) * up(x)).

#include <ATen/ATen.h>

#include <string>

#include "io/weight_loader.h"
#include "layers/linear.h"

namespace izwi {

struct GatedMlpNames {
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
};

class GatedMlp {
 public:
  GatedMlp(WeightLoader& loader, const std::string& prefix, int64_t hidden_size, int64_t intermediate_size,
           bool bias, const GatedMlpNames& names = {});
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  Linear gate_, up_, down_;
};

}  // namespace izwi
