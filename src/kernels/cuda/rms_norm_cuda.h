#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// rms_norm_cpu on device pointers, with the residual add of the layer before it fused in:
/// with `residual` null, y[r] = weight * x[r] / sqrt(mean(x[r]^2) + eps); otherwise first
/// residual[r] += x[r] (the updated residual stream) and the norm is taken of that sum.
/// `rows` rows of `dim` floats; y may alias x.
void rms_norm_cuda(const float* x, float* residual, const float* weight, float* y, int64_t rows, int64_t dim, float eps,
                   cudaStream_t stream);

}  // namespace izwi
