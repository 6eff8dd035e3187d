#include "kernels/cpu/silu_mul_cpu.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace izwi {

void silu_mul_cpu(const float* gate_up, float* out, int64_t tokens, int64_t width) {
  at::parallel_for(0, tokens, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* g = gate_up + t * 2 * width;
      const float* u = g + width;
      float* o = out + t * width;
#pragma omp simd
      for (int64_t i = 0; i < width; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    }
  });
}

}  // namespace izwi
