#include "models/lfm2_audio/audio_adapter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/check.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/layer_norm_op.h"
#include "kernels/ops/linear_op.h"

namespace izwi {
namespace {

constexpr double kLayerNormEps = 1e-5;  // torch.nn.LayerNorm's default, as the MLP builds it

}  // namespace

Lfm2AudioAdapter::Lfm2AudioAdapter(WeightSource& source, int64_t in_dim, int64_t out_dim, const std::string& prefix)
    : in_dim_(in_dim), out_dim_(out_dim), backend_(&source.backend()) {
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
  const Backend& backend = *backend_;
  const at::Tensor h = ops::layer_norm(backend, x, norm_weight_, norm_bias_, kLayerNormEps);
  const at::Tensor up = ops::linear(backend, h, in_weight_, in_bias_);
  return ops::linear(backend, ops::activation(backend, up, ops::Activation::Gelu), out_weight_, out_bias_);
}

}  // namespace izwi
