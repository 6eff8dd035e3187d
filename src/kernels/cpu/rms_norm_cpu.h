#pragma once

#include <cstdint>

namespace izwi {

/// y[r] = weight * x[r] / sqrt(mean(x[r]^2) + eps) for each of `rows` rows of `dim` floats.
/// y may alias x.
void rms_norm_cpu(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps);

}  // namespace izwi
