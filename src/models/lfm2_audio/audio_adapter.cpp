#include "models/lfm2_audio/audio_adapter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/check.h"

namespace izwi {
namespace {

constexpr double kLayerNormEps = 1e-5;  // torch.nn.LayerNorm's default, as the MLP builds it

// Matrices may be stored in another dtype than the activations (WeightSource::take_matrix).
at::Tensor dense(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return at::linear(x, weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type()), bias);
}

}  // namespace

Lfm2AudioAdapter::Lfm2AudioAdapter(WeightSource& source, int64_t in_dim, int64_t out_dim, const std::string& prefix)
    : in_dim_(in_dim), out_dim_(out_dim) {
  norm_weight_ = source.take(prefix + ".0.weight", {in_dim});
  norm_bias_ = source.take(prefix + ".0.bias", {in_dim});
  in_weight_ = source.take_matrix(prefix + ".1.weight", {out_dim, in_dim});
  in_bias_ = source.take(prefix + ".1.bias", {out_dim});
  out_weight_ = source.take_matrix(prefix + ".3.weight", {out_dim, out_dim});
  out_bias_ = source.take(prefix + ".3.bias", {out_dim});
}

at::Tensor Lfm2AudioAdapter::operator()(const at::Tensor& encoder_out) const {
  if (encoder_out.dim() != 2 || encoder_out.size(1) != in_dim_) {
    fail(ErrorCode::InvalidArgument, "LFM2-Audio adapter: expected encoder frames [n, {}], got [{}]", in_dim_,
         fmt::join(encoder_out.sizes(), ", "));
  }
  const at::Tensor x = encoder_out.to(norm_weight_.device(), norm_weight_.scalar_type());
  const at::Tensor h = at::layer_norm(x, {in_dim_}, norm_weight_, norm_bias_, kLayerNormEps);
  return dense(at::gelu(dense(h, in_weight_, in_bias_)), out_weight_, out_bias_);  // exact (erf) GELU
}

}  // namespace izwi
