#include "layers/gated_mlp.h"

namespace izwi {

GatedMlp::GatedMlp(WeightLoader& loader, const std::string& prefix, int64_t hidden_size, int64_t intermediate_size,
                   bool bias, const GatedMlpNames& names)
    : gate_(Linear::load(loader, prefix + "." + names.gate, intermediate_size, hidden_size, bias)),
      up_(Linear::load(loader, prefix + "." + names.up, intermediate_size, hidden_size, bias)),
      down_(Linear::load(loader, prefix + "." + names.down, hidden_size, intermediate_size, bias)) {}

at::Tensor GatedMlp::operator()(const at::Tensor& x) const { return down_(at::silu(gate_(x)) * up_(x)); }

}  // namespace izwi
