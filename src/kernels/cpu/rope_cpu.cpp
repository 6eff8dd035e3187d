#include "kernels/cpu/rope_cpu.h"

#include <ATen/Parallel.h>

namespace izwi {

void rope_cpu(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
              int64_t heads, int64_t head_dim) {
  const int64_t half = head_dim / 2;
  at::parallel_for(0, tokens * heads, 256, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t pos = positions[row / heads];
      rope_row(x + row * head_dim, cos_table + pos * half, sin_table + pos * half, half);
    }
  });
}

}  // namespace izwi
