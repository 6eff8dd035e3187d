#include "codec/convnext_block.h"

#include "io/weight_source.h"
#include "kernels/ops/activation_op.h"
#include "kernels/ops/layer_norm_op.h"
#include "kernels/ops/linear_op.h"

namespace izwi {

ConvNeXtBlock::ConvNeXtBlock(WeightSource& weights, const std::string& prefix, int64_t dim)
    : dwconv_(weights, prefix + ".dwconv.conv", dim, dim, 7, 1, dim), backend_(&weights.backend()) {
  norm_weight_ = weights.take(prefix + ".norm.weight", {dim});
  norm_bias_ = weights.take(prefix + ".norm.bias", {dim});
  pw1_weight_ = weights.take_matrix(prefix + ".pwconv1.weight", {4 * dim, dim});
  pw1_bias_ = weights.take(prefix + ".pwconv1.bias", {4 * dim});
  pw2_weight_ = weights.take_matrix(prefix + ".pwconv2.weight", {dim, 4 * dim});
  pw2_bias_ = weights.take(prefix + ".pwconv2.bias", {dim});
  gamma_ = weights.take(prefix + ".gamma", {dim});
}

int64_t ConvNeXtBlock::weight_bytes() const {
  int64_t bytes = dwconv_.weight_bytes();
  for (const at::Tensor* t :
       {&norm_weight_, &norm_bias_, &pw1_weight_, &pw1_bias_, &pw2_weight_, &pw2_bias_, &gamma_}) {
    bytes += t->nbytes();
  }
  return bytes;
}

at::Tensor ConvNeXtBlock::forward(const at::Tensor& x, at::Tensor& dwconv_state) const {
  at::Tensor h = dwconv_.forward(x, dwconv_state).transpose(1, 2);  // [B, T, dim]
  h = ops::layer_norm(*backend_, h, norm_weight_, norm_bias_, 1e-6);
  h = ops::activation(*backend_, ops::linear(*backend_, h, pw1_weight_, pw1_bias_), ops::Activation::Gelu);
  h = ops::linear(*backend_, h, pw2_weight_, pw2_bias_) * gamma_;
  return x + h.transpose(1, 2);
}

}  // namespace izwi
