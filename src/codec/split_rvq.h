#pragma once
// Split residual vector quantizer decode (Mimi style): codebook 0 is looked up in `rvq_first`,
// codebooks 1.. in `rvq_rest` and summed; each half has a bias-free k1 output projection and the
// two results are added. Each table is embedding_sum / clamp(cluster_usage, 1e-5)[:, None],
// computed at load.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

namespace izwi {

class WeightSource;

class SplitRvqDecoder {
 public:
  SplitRvqDecoder() = default;
  /// `dim` = codebook_dim / 2 (table width), `output_dim` = codebook_dim. The encoder-side
  /// input projections are skipped.
  SplitRvqDecoder(WeightSource& weights, const std::string& prefix, int64_t num_quantizers, int64_t codebook_size,
                  int64_t dim, int64_t output_dim);

  /// codes [B, num_quantizers, T] int64, already range-checked -> [B, output_dim, T].
  at::Tensor forward(const at::Tensor& codes) const;
  int64_t weight_bytes() const {
    return first_table_.nbytes() + rest_table_.nbytes() + first_proj_.nbytes() + rest_proj_.nbytes();
  }

 private:
  at::Tensor first_table_;             ///< [codebook_size, dim]
  at::Tensor rest_table_;              ///< [(num_quantizers - 1) * codebook_size, dim]
  at::Tensor rest_offsets_;            ///< [1, num_quantizers - 1, 1] int64: k * codebook_size
  at::Tensor first_proj_, rest_proj_;  ///< [output_dim, dim, 1]
  int64_t num_quantizers_ = 0;
};

}  // namespace izwi
