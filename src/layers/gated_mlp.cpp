#include "layers/gated_mlp.h"

#include "kernels/cpu/silu_mul_cpu.h"

namespace izwi {

GatedMlp::GatedMlp(WeightSource& source, const std::string& prefix, int64_t hidden_size, int64_t intermediate_size,
                   bool gate_up_bias, bool down_bias, const GatedMlpNames& names)
    : intermediate_size_(intermediate_size),
      gate_up_(Linear::load_stacked(source, {prefix + "." + names.gate, prefix + "." + names.up},
                                    {intermediate_size, intermediate_size}, hidden_size, gate_up_bias)),
      down_(Linear::load(source, prefix + "." + names.down, hidden_size, intermediate_size, down_bias)) {}

at::Tensor GatedMlp::operator()(const at::Tensor& x, const ForwardContext& ctx) const {
  const at::Tensor gate_up = gate_up_(x, ctx);
  at::Tensor product;
  if (ctx.fast_kernels && gate_up.scalar_type() == at::kFloat && gate_up.is_contiguous()) {
    product = at::empty({gate_up.size(0), intermediate_size_}, gate_up.options());
    silu_mul_cpu(gate_up.data_ptr<float>(), product.data_ptr<float>(), gate_up.size(0), intermediate_size_);
  } else {
    product =
        at::silu(gate_up.narrow(1, 0, intermediate_size_)) * gate_up.narrow(1, intermediate_size_, intermediate_size_);
  }
  return down_(product, ctx);
}

}  // namespace izwi
