#include "kernels/cpu/rms_norm_cpu.h"

#include <ATen/Parallel.h>

namespace izwi {

void rms_norm_cpu(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps) {
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) rms_norm_row(x + r * dim, weight, y + r * dim, dim, eps);
  });
}

}  // namespace izwi
