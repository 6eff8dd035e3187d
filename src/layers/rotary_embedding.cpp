#include "layers/rotary_embedding.h"

#include <cmath>

#include "kernels/cpu/rope_cpu.h"

namespace izwi {

namespace {

at::Tensor llama3_inv_freq(const at::Tensor& inv_freq, const RopeConfig& c) {
  const double old_context = static_cast<double>(c.original_max_positions);
  const double low_freq_wavelen = old_context / c.low_freq_factor;
  const double high_freq_wavelen = old_context / c.high_freq_factor;
  at::Tensor wavelen = 2 * M_PI / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / c.factor, inv_freq);
  at::Tensor smooth = (old_context / wavelen - c.low_freq_factor) / (c.high_freq_factor - c.low_freq_factor);
  at::Tensor smoothed = (1 - smooth) * scaled / c.factor + smooth * scaled;
  at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(const RopeConfig& config, int64_t head_dim, int64_t max_positions,
                                 const at::Device& device, at::ScalarType dtype) {
  auto f32 = at::TensorOptions().dtype(at::kFloat);
  at::Tensor exponents = at::arange(0, head_dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / head_dim;
  at::Tensor inv_freq = 1.0 / at::pow(at::scalar_tensor(config.theta, f32), exponents);
  if (config.type == "llama3") inv_freq = llama3_inv_freq(inv_freq, config);
  if (config.type == "linear") inv_freq = inv_freq / config.factor;
  inv_freq_ = inv_freq.to(device);
  dtype_ = dtype;
  if (max_positions > 0) {
    at::Tensor freqs = at::outer(at::arange(max_positions, f32), inv_freq);
    cos_ = freqs.cos().to(device, dtype);
    sin_ = freqs.sin().to(device, dtype);
  }
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const ForwardContext& ctx) const {
  if (ctx.fast_kernels && cos_.defined() && x.scalar_type() == at::kFloat && cos_.scalar_type() == at::kFloat) {
    at::Tensor y = x.is_contiguous() ? x.clone() : x.contiguous();  // a fresh buffer either way
    rope_cpu(y.data_ptr<float>(), ctx.positions.data_ptr<int64_t>(), cos_.data_ptr<float>(), sin_.data_ptr<float>(),
             y.size(0), y.size(1), y.size(2));
    return y;
  }
  return apply(x, ctx.positions);
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const at::Tensor& positions) const {
  const int64_t half = x.size(-1) / 2;
  at::Tensor cos, sin;
  if (cos_.defined()) {
    cos = cos_.index_select(0, positions).unsqueeze(1);
    sin = sin_.index_select(0, positions).unsqueeze(1);
  } else {
    const at::Tensor freqs = at::outer(positions.to(at::kFloat), inv_freq_);
    cos = freqs.cos().to(dtype_).unsqueeze(1);
    sin = freqs.sin().to(dtype_).unsqueeze(1);
  }
  at::Tensor x1 = x.narrow(-1, 0, half);
  at::Tensor x2 = x.narrow(-1, half, half);
  at::Tensor r1 = x1 * cos - x2 * sin;
  at::Tensor r2 = x2 * cos + x1 * sin;
  return at::cat({r1, r2}, -1);
}

}  // namespace izwi
