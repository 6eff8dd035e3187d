#include "layers/rotary_embedding.h"

#include <cmath>

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
  angles_.inv_freq = inv_freq.to(device);
  angles_.dtype = dtype;
  if (max_positions > 0) {
    at::Tensor freqs = at::outer(at::arange(max_positions, f32), inv_freq);
    angles_.cos = freqs.cos().to(device, dtype);
    angles_.sin = freqs.sin().to(device, dtype);
  }
}

}  // namespace izwi
