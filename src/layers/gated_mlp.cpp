#include "layers/gated_mlp.h"

#include "kernels/ops/silu_mul_op.h"

namespace izwi {

GatedMlp::GatedMlp(WeightSource& source, const std::string& prefix, int64_t hidden_size, int64_t intermediate_size,
                   bool gate_up_bias, bool down_bias, const GatedMlpNames& names)
    : intermediate_size_(intermediate_size),
      gate_up_(Linear::load_stacked(source, {prefix + "." + names.gate, prefix + "." + names.up},
                                    {intermediate_size, intermediate_size}, hidden_size, gate_up_bias)),
      down_(Linear::load(source, prefix + "." + names.down, hidden_size, intermediate_size, down_bias)) {}

at::Tensor GatedMlp::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  return down_(ops::silu_mul(*ctx.backend, gate_up_(x, ctx), intermediate_size_), ctx);
}

}  // namespace izwi
