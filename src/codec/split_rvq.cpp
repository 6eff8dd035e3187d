#include "codec/split_rvq.h"

#include <fmt/format.h>

#include <vector>

#include "common/check.h"
#include "io/weight_source.h"
#include "kernels/ops/conv1d_op.h"

namespace izwi {

SplitRvq::Half SplitRvq::load_half(WeightSource& weights, const std::string& prefix, int64_t count,
                                   bool encoder) const {
  const SplitRvqConfig& c = config_;
  Half half;
  half.count = count;
  if (count == 0) return half;
  std::vector<at::Tensor> tables;
  for (int64_t k = 0; k < count; ++k) {
    const std::string p = fmt::format("{}.layers.{}.codebook.", prefix, k);
    const at::Tensor sum = weights.take(p + "embed_sum", {c.codebook_size, c.dim}).to(at::kFloat);
    const at::Tensor usage = weights.take(p + "cluster_usage", {c.codebook_size}).to(at::kFloat);
    tables.push_back(sum / usage.clamp_min(1e-5).unsqueeze(1));
    if (weights.contains(p + "initialized")) weights.skip(p + "initialized");
  }
  half.table = at::cat(tables, 0).to(weights.compute_dtype());
  half.offsets =
      (at::arange(count, at::TensorOptions().dtype(at::kLong)) * c.codebook_size).view({1, -1, 1}).to(weights.device());
  // transformers leaves the projections out when the table is as wide as the model.
  if (c.dim != c.output_dim || weights.contains(prefix + ".output_proj.weight")) {
    half.output_proj = weights.take(prefix + ".output_proj.weight", {c.output_dim, c.dim, 1});
    if (encoder) {
      half.input_proj = weights.take(prefix + ".input_proj.weight", {c.dim, c.output_dim, 1});
    } else if (weights.contains(prefix + ".input_proj.weight")) {
      weights.skip(prefix + ".input_proj.weight");
    }
  }
  return half;
}

SplitRvq::SplitRvq(WeightSource& weights, const std::string& prefix, const SplitRvqConfig& config, bool encoder)
    : config_(config), backend_(&weights.backend()) {
  IZWI_CHECK(config.num_semantic >= 1 && config.num_semantic <= config.num_quantizers, "semantic codebooks {} of {}",
             config.num_semantic, config.num_quantizers);
  semantic_ = load_half(weights, prefix + ".semantic_residual_vector_quantizer", config.num_semantic, encoder);
  acoustic_ = load_half(weights, prefix + ".acoustic_residual_vector_quantizer",
                        config.num_quantizers - config.num_semantic, encoder);
}

int64_t SplitRvq::weight_bytes() const {
  int64_t total = 0;
  for (const Half* half : {&semantic_, &acoustic_}) {
    for (const at::Tensor* t : {&half->table, &half->input_proj, &half->output_proj}) {
      if (t->defined()) total += static_cast<int64_t>(t->nbytes());
    }
  }
  return total;
}

at::Tensor SplitRvq::decode_half(const Half& half, const at::Tensor& codes) const {
  const int64_t count = codes.size(1);
  const at::Tensor summed =
      at::embedding(half.table, codes + half.offsets.narrow(1, 0, count)).sum(1).transpose(1, 2);  // [B, dim, T]
  return half.output_proj.defined() ? ops::conv1d(*backend_, summed, half.output_proj, {}) : summed;
}

at::Tensor SplitRvq::decode(const at::Tensor& codes) const {
  const int64_t k = codes.size(1), semantic = std::min(k, config_.num_semantic);
  at::Tensor out = decode_half(semantic_, codes.narrow(1, 0, semantic));
  if (k > semantic) out = out + decode_half(acoustic_, codes.narrow(1, semantic, k - semantic));
  return out;
}

at::Tensor SplitRvq::encode_half(const Half& half, const at::Tensor& embeddings, int64_t count) const {
  const int64_t n = config_.codebook_size;
  // Nearest centroid in float32, as the reference's cdist + argmin.
  at::Tensor residual =
      (half.input_proj.defined() ? ops::conv1d(*backend_, embeddings, half.input_proj, {}) : embeddings)
          .transpose(1, 2)
          .to(at::kFloat);
  std::vector<at::Tensor> codes;
  for (int64_t k = 0; k < count; ++k) {
    const at::Tensor table = half.table.narrow(0, k * n, n).to(at::kFloat);  // [n, dim]
    const at::Tensor flat = residual.reshape({-1, residual.size(-1)});
    const at::Tensor index = at::cdist(flat.unsqueeze(0), table.unsqueeze(0)).squeeze(0).argmin(-1);
    codes.push_back(index.view({residual.size(0), residual.size(1)}));
    residual = residual - at::embedding(table, codes.back());
  }
  return at::stack(codes, 1);  // [B, count, T]
}

at::Tensor SplitRvq::encode(const at::Tensor& embeddings, int64_t num_codebooks) const {
  IZWI_CHECK(num_codebooks >= config_.num_semantic && num_codebooks <= config_.num_quantizers,
             "{} codebooks requested of {}", num_codebooks, config_.num_quantizers);
  at::Tensor codes = encode_half(semantic_, embeddings, config_.num_semantic);
  if (num_codebooks > config_.num_semantic) {
    codes = at::cat({codes, encode_half(acoustic_, embeddings, num_codebooks - config_.num_semantic)}, 1);
  }
  return codes;
}

}  // namespace izwi
