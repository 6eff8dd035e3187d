#include "codec/split_rvq.h"

#include <fmt/format.h>

#include <vector>

#include "io/weight_source.h"

namespace izwi {
namespace {

at::Tensor codebook_table(WeightSource& weights, const std::string& prefix, int64_t codebook_size, int64_t dim) {
  const at::Tensor sum = weights.take(prefix + "._codebook.embedding_sum", {codebook_size, dim}).to(at::kFloat);
  const at::Tensor usage = weights.take(prefix + "._codebook.cluster_usage", {codebook_size}).to(at::kFloat);
  return (sum / usage.clamp_min(1e-5).unsqueeze(1)).to(weights.compute_dtype());
}

}  // namespace

SplitRvqDecoder::SplitRvqDecoder(WeightSource& weights, const std::string& prefix, int64_t num_quantizers,
                                 int64_t codebook_size, int64_t dim, int64_t output_dim)
    : num_quantizers_(num_quantizers) {
  first_table_ = codebook_table(weights, prefix + ".rvq_first.vq.layers.0", codebook_size, dim);
  std::vector<at::Tensor> rest;
  for (int64_t k = 0; k + 1 < num_quantizers; ++k) {
    rest.push_back(codebook_table(weights, fmt::format("{}.rvq_rest.vq.layers.{}", prefix, k), codebook_size, dim));
  }
  rest_table_ = at::cat(rest, 0);
  rest_offsets_ = (at::arange(num_quantizers - 1, at::TensorOptions().dtype(at::kLong)) * codebook_size)
                      .view({1, -1, 1})
                      .to(weights.device());
  first_proj_ = weights.take(prefix + ".rvq_first.output_proj.weight", {output_dim, dim, 1});
  rest_proj_ = weights.take(prefix + ".rvq_rest.output_proj.weight", {output_dim, dim, 1});
  for (const char* half : {".rvq_first", ".rvq_rest"}) {
    if (weights.contains(prefix + half + ".input_proj.weight")) weights.skip(prefix + half + ".input_proj.weight");
  }
}

at::Tensor SplitRvqDecoder::forward(const at::Tensor& codes) const {
  const at::Tensor first = at::embedding(first_table_, codes.select(1, 0)).transpose(1, 2);  // [B, dim, T]
  at::Tensor out = at::conv1d(first, first_proj_);
  if (num_quantizers_ > 1) {
    const at::Tensor rest_codes = codes.narrow(1, 1, num_quantizers_ - 1) + rest_offsets_;
    const at::Tensor rest = at::embedding(rest_table_, rest_codes).sum(1).transpose(1, 2);  // [B, dim, T]
    out = out + at::conv1d(rest, rest_proj_);
  }
  return out;
}

}  // namespace izwi
