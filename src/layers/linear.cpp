#include "layers/linear.h"

#include <algorithm>

#include "common/check.h"
#include "kernels/ops/linear_op.h"
#include "quant/dequantize.h"

namespace izwi {

Linear::Linear(at::Tensor weight, at::Tensor bias) : weight_(std::move(weight)), bias_(std::move(bias)) {}

Linear::Linear(PackedWeight weight, at::Tensor bias) : packed_(std::move(weight)), bias_(std::move(bias)) {}

Linear::Linear(QuantizedMatrix weight, at::Tensor bias) : quantized_(std::move(weight)), bias_(std::move(bias)) {}

int64_t Linear::weight_bytes() const {
  if (packed_.defined()) return packed_.bytes();
  if (quantized_.values.defined()) return quantized_.bytes();
  return weight_.numel() * static_cast<int64_t>(weight_.element_size());
}

Linear Linear::load(WeightSource& source, const std::string& prefix, int64_t out_features, int64_t in_features,
                    bool with_bias) {
  return load_stacked(source, {prefix}, {out_features}, in_features, with_bias);
}

Linear Linear::load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                            const std::vector<int64_t>& out_features, int64_t in_features, bool with_bias) {
  return load_stacked(source, prefixes, out_features, in_features, std::vector<bool>(prefixes.size(), with_bias));
}

namespace {

// Projections quantized alike stacked into one matrix (rows of each in turn). GPTQ's act-order
// permutes each projection's columns its own way; those cannot share one product.
QuantizedMatrix stack_quantized(const std::vector<QuantizedMatrix>& parts, const std::vector<std::string>& names) {
  if (parts.size() == 1) return parts[0];
  const QuantizedMatrix& first = parts[0];
  QuantizedMatrix stacked = first;
  std::vector<at::Tensor> values, scales, zeros;
  const bool any_zeros =
      std::any_of(parts.begin(), parts.end(), [](const QuantizedMatrix& m) { return m.zeros.defined(); });
  for (size_t i = 0; i < parts.size(); ++i) {
    const QuantizedMatrix& m = parts[i];
    const bool same_order = m.column_order.defined() == first.column_order.defined() &&
                            (!m.column_order.defined() || m.column_order.equal(first.column_order));
    if (m.kind != first.kind || m.group_size != first.group_size || m.in != first.in || !same_order) {
      fail(ErrorCode::Unsupported,
           "quantized weights '{}' and '{}' are multiplied as one matrix but differ in kind, group size or column "
           "order (act-order)",
           names[0], names[i]);
    }
    values.push_back(m.values);
    scales.push_back(m.scales);
    if (any_zeros) zeros.push_back(m.zeros.defined() ? m.zeros : at::full(m.scales.sizes(), 8, at::kByte));
  }
  stacked.out = 0;
  for (const QuantizedMatrix& m : parts) stacked.out += m.out;
  stacked.values = at::cat(values, 0);
  stacked.scales = at::cat(scales, 0);
  stacked.zeros = any_zeros ? at::cat(zeros, 0) : at::Tensor();
  return stacked;
}

}  // namespace

Linear Linear::load_stacked(WeightSource& source, const std::vector<std::string>& prefixes,
                            const std::vector<int64_t>& out_features, int64_t in_features,
                            const std::vector<bool>& with_bias) {
  const bool any_bias = std::find(with_bias.begin(), with_bias.end(), true) != with_bias.end();
  const PanelKernels* kernels = source.cpu_kernels();
  const ops::QuantizedKernelSupport device_kernels = ops::QuantizedKernelSupport::of(source.backend());
  std::vector<at::Tensor> weights, biases;
  std::vector<QuantizedMatrix> quantized;
  std::vector<std::string> names;
  for (size_t i = 0; i < prefixes.size(); ++i) {
    const std::string name = prefixes[i] + ".weight";
    names.push_back(name);
    std::optional<QuantizedMatrix> q = source.take_quantized(name, {out_features[i], in_features});
    // The CPU kernels take int8 and int4; FP8 checkpoints (a Hopper format) run dequantized there.
    const bool cpu_quantized = kernels != nullptr && q.has_value() && q->kind != QuantKind::Fp8E4M3;
    if (q.has_value() && (cpu_quantized || ops::keeps_quantized(device_kernels, *q))) {
      quantized.push_back(std::move(*q));
    } else if (q.has_value()) {
      // No quantized kernel on this backend for it: the checkpoint's weights dequantized once.
      weights.push_back(dequantize(*q).to(source.device(), source.weight_dtype()).contiguous());
      ResidentWeightBytes::add(static_cast<int64_t>(weights.back().nbytes()));
    } else {
      weights.push_back(source.take_matrix(name, {out_features[i], in_features}));
    }
    if (with_bias[i]) {
      biases.push_back(source.take(prefixes[i] + ".bias", {out_features[i]}));
    } else if (any_bias) {
      biases.push_back(
          at::zeros({out_features[i]}, at::TensorOptions().dtype(source.compute_dtype()).device(source.device())));
    }
  }
  at::Tensor bias = !any_bias ? at::Tensor() : biases.size() == 1 ? biases[0] : at::cat(biases, 0);
  if (!quantized.empty()) {
    if (!weights.empty()) {
      fail(ErrorCode::InvalidFormat, "'{}': weights multiplied as one matrix are stored part quantized, part not",
           names[0]);
    }
    const QuantizedMatrix stacked = stack_quantized(quantized, names);
    Linear linear = kernels != nullptr ? Linear(PackedWeight::pack(stacked, *kernels, names[0]), bias)
                                       : Linear(stacked.to(source.device()), bias);
    ResidentWeightBytes::add(linear.weight_bytes());
    return linear;
  }
  at::Tensor weight = weights.size() == 1 ? weights[0] : at::cat(weights, 0);
  if (kernels != nullptr && PackedWeight::packable(weight)) return Linear(PackedWeight::pack(weight, *kernels), bias);
  return Linear(weight, bias);
}

at::Tensor Linear::operator()(const at::Tensor& x, const ForwardContext& ctx) const { return (*this)(x, *ctx.backend); }

at::Tensor Linear::operator()(const at::Tensor& x, const Backend& backend) const {
  if (packed_.defined()) return packed_.linear(x, bias_);
  if (quantized_.values.defined()) return ops::linear_quantized(backend, x, quantized_, bias_);
  return ops::linear(backend, x, weight_, bias_);
}

}  // namespace izwi
