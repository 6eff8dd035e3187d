#include "kernels/cpu/rms_norm_cpu.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace izwi {

void rms_norm_cpu(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps) {
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * dim;
      float* yr = y + r * dim;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < dim; ++i) sum += xr[i] * xr[i];
      const float scale = 1.0f / std::sqrt(sum / static_cast<float>(dim) + eps);
#pragma omp simd
      for (int64_t i = 0; i < dim; ++i) yr[i] = weight[i] * (xr[i] * scale);
    }
  });
}

}  // namespace izwi
