#include "layers/packed_weight.h"

#include "common/check.h"
#include "kernels/cpu/panel_linear_cpu.h"
#include "kernels/cpu/quant_linear_cpu.h"

namespace izwi {

bool PackedWeight::packable(const at::Tensor& weight) {
  return weight.dim() == 2 && weight.is_cpu() &&
         (weight.scalar_type() == at::kFloat || weight.scalar_type() == at::kBFloat16);
}

PackedWeight PackedWeight::pack(const at::Tensor& weight, const PanelKernels& kernels) {
  IZWI_CHECK(packable(weight), "PackedWeight::pack: expected a 2-d float32 or bf16 CPU matrix");
  PackedWeight packed;
  packed.kernels_ = &kernels;
  packed.out_ = weight.size(0);
  packed.in_ = weight.size(1);
  packed.format_ = weight.scalar_type() == at::kFloat ? WeightFormat::F32 : WeightFormat::BF16;
  const at::Tensor rows = weight.contiguous();
  packed.data_ = at::empty({packed_elements(packed.out_, packed.in_, packed.format_, kernels)}, rows.options());
  pack_panels(rows.data_ptr(), packed.format_, packed.out_, packed.in_, packed.data_.data_ptr(), kernels);
  return packed;
}

PackedWeight PackedWeight::pack(const QuantizedMatrix& weight, const PanelKernels& kernels, const std::string& name) {
  PackedWeight packed;
  packed.quant_layout_ = quant_layout(weight, name);
  packed.kernels_ = &kernels;
  packed.quant_kernels_ = &quant_kernels_for(kernels);
  packed.format_ = packed.quant_layout_.format;
  packed.out_ = weight.out;
  packed.in_ = weight.in;
  packed.data_ = pack_quantized(weight, packed.quant_layout_);
  if (weight.column_order.defined()) packed.column_order_ = weight.column_order.contiguous();
  return packed;
}

int64_t PackedWeight::bytes() const {
  if (quantized()) return quant_layout_.panel_bytes() * out_ / kQuantPanelRows;
  return out_ * in_ * static_cast<int64_t>(data_.element_size());
}

at::Tensor PackedWeight::linear(const at::Tensor& x, const at::Tensor& bias) const {
  at::Tensor y = at::empty({x.numel() / std::max<int64_t>(in_, 1), out_}, x.options().dtype(at::kFloat));
  linear_out(x, bias, y);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_;
  return y.view(shape);
}

void PackedWeight::linear_out(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& y) const {
  IZWI_CHECK(x.scalar_type() == at::kFloat && x.is_cpu() && x.size(-1) == in_,
             "packed linear: expected float32 CPU input [..., {}]", in_);
  const at::Tensor xc = x.reshape({-1, in_}).contiguous();
  IZWI_CHECK(y.scalar_type() == at::kFloat && y.is_contiguous() && y.numel() == xc.size(0) * out_,
             "packed linear: expected a contiguous float32 output [{}, {}]", xc.size(0), out_);
  const at::Tensor b = bias.defined() ? bias.to(at::kFloat).contiguous() : at::Tensor();
  if (quantized()) {
    linear_quantized_cpu(xc.data_ptr<float>(), xc.size(0),
                         column_order_.defined() ? column_order_.data_ptr<int64_t>() : nullptr,
                         data_.data_ptr<uint8_t>(), quant_layout_, out_, b.defined() ? b.data_ptr<float>() : nullptr,
                         y.data_ptr<float>(), *quant_kernels_);
    return;
  }
  linear_packed_cpu(xc.data_ptr<float>(), xc.size(0), in_, data_.data_ptr(), format_, out_,
                    b.defined() ? b.data_ptr<float>() : nullptr, y.data_ptr<float>(), *kernels_);
}

void PackedWeight::product(const PanelInputs& x, int64_t tokens, const float* bias, const PanelOutputs& y) const {
  IZWI_CHECK(!quantized(), "PackedWeight::product: quantized weights take row-major inputs (linear_out)");
  linear_packed_cpu(x, tokens, in_, data_.data_ptr(), format_, out_, bias, y, *kernels_);
}

at::Tensor PackedWeight::rows(const at::Tensor& ids) const {
  const at::Tensor index = ids.to(at::kLong).contiguous();
  // A plain loop over the few ids of a step: two tensor reductions would cost more than the lookup.
  const int64_t* id = index.data_ptr<int64_t>();
  for (int64_t i = 0; i < index.numel(); ++i) {
    IZWI_CHECK(id[i] >= 0 && id[i] < out_, "embedding id {} outside the table's {} rows", id[i], out_);
  }
  at::Tensor out = at::empty({index.numel(), in_}, at::TensorOptions().dtype(at::kFloat));
  if (quantized()) {
    gather_quantized_rows(data_.data_ptr<uint8_t>(), quant_layout_,
                          column_order_.defined() ? column_order_.data_ptr<int64_t>() : nullptr,
                          index.data_ptr<int64_t>(), index.numel(), out.data_ptr<float>());
    return out;
  }
  gather_packed_rows(data_.data_ptr(), format_, in_, index.data_ptr<int64_t>(), index.numel(), out.data_ptr<float>(),
                     *kernels_);
  return out;
}

}  // namespace izwi
