#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// rms_norm_cpu on device pointers, with the residual add of the layer before it fused in:
/// with `residual` null, y[r] = weight * x[r] / sqrt(mean(x[r]^2) + eps); otherwise first
/// residual[r] += x[r] (the updated residual stream) and the norm is taken of that sum.
/// `rows` rows of `dim` elements; x, residual and y may alias one another.
void rms_norm_cuda(const float* x, float* residual, const float* weight, float* y, int64_t rows, int64_t dim, float eps,
                   cudaStream_t stream);

/// The same for bf16 activations with float32 or bf16 weights: float32 math, bf16 in and out. The
/// updated residual is stored rounded to bf16 and the norm is of that stored sum, as
/// residual.add_(x) then the norm compute; y is rounded once, from the float32 product.
void rms_norm_cuda(const __nv_bfloat16* x, __nv_bfloat16* residual, const float* weight, __nv_bfloat16* y, int64_t rows,
                   int64_t dim, float eps, cudaStream_t stream);
void rms_norm_cuda(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* y,
                   int64_t rows, int64_t dim, float eps, cudaStream_t stream);

}  // namespace izwi
