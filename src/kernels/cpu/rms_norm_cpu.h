#pragma once

#include <cmath>
#include <cstdint>

namespace izwi {

/// y = weight * x / sqrt(mean(x^2) + eps) for one row of `dim` floats; y may alias x. Inline, so
/// the fused kernels that norm a row on the way (attention_inputs_cpu) compute the same floats.
inline void rms_norm_row(const float* x, const float* weight, float* y, int64_t dim, float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < dim; ++i) sum += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(sum / static_cast<float>(dim) + eps);
#pragma omp simd
  for (int64_t i = 0; i < dim; ++i) y[i] = weight[i] * (x[i] * scale);
}

/// rms_norm_row for each of `rows` rows of `dim` floats. y may alias x.
void rms_norm_cpu(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps);

}  // namespace izwi
