#pragma once
// Mimi's split residual vector quantizer: the first `num_semantic` codebooks belong to the
// semantic RVQ, the rest to the acoustic RVQ; each RVQ has its own 1x1 input (encode) and output
// (decode) projections. Decode sums each half's table rows and projects; encode quantizes the
// same projected embedding in both halves (each half residually over its own codebooks). Tables
// are embed_sum / clamp(cluster_usage, 1e-5)[:, None], computed at load. Tensor names are
// transformers' `MimiSplitResidualVectorQuantizer` ones; mimi_names.h maps moshi's.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

namespace izwi {

class Backend;
class WeightSource;

struct SplitRvqConfig {
  int64_t num_quantizers = 0;  ///< In the checkpoint (semantic + acoustic).
  int64_t num_semantic = 1;
  int64_t codebook_size = 0;
  int64_t dim = 0;         ///< Table width.
  int64_t output_dim = 0;  ///< Embedding width on the model side.
};

class SplitRvq {
 public:
  SplitRvq() = default;
  /// Reads `<prefix>.{semantic,acoustic}_residual_vector_quantizer.*`. With `encoder` the input
  /// projections are taken (encode() works), else skipped.
  SplitRvq(WeightSource& weights, const std::string& prefix, const SplitRvqConfig& config, bool encoder);

  /// codes [B, K, T] int64 (1 <= K <= num_quantizers), already range-checked -> [B, output_dim, T].
  at::Tensor decode(const at::Tensor& codes) const;
  /// embeddings [B, output_dim, T] -> codes [B, K, T] int64 (K >= num_semantic).
  at::Tensor encode(const at::Tensor& embeddings, int64_t num_codebooks) const;
  int64_t weight_bytes() const;

 private:
  struct Half {
    at::Tensor table;                    ///< [count * codebook_size, dim]: codebook k's rows at k * codebook_size
    at::Tensor offsets;                  ///< [1, count, 1] int64: k * codebook_size
    at::Tensor input_proj, output_proj;  ///< [dim, output_dim, 1], [output_dim, dim, 1] (absent: identity)
    int64_t count = 0;
  };
  Half load_half(WeightSource& weights, const std::string& prefix, int64_t count, bool encoder) const;
  at::Tensor decode_half(const Half& half, const at::Tensor& codes) const;
  at::Tensor encode_half(const Half& half, const at::Tensor& embeddings, int64_t count) const;

  SplitRvqConfig config_;
  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  Half semantic_, acoustic_;
};

}  // namespace izwi
