#pragma once

#include <cstdint>

namespace izwi {

/// Rotates one head of `2 * half` floats in place (rotate-half convention: x[i] and x[half + i] are
/// a pair) by the angles whose cosines and sines are c and s [half]. Inline, so the fused kernels
/// that rotate a head on the way (attention_inputs_cpu) compute the same floats.
inline void rope_row(float* x, const float* c, const float* s, int64_t half) {
  float* x2 = x + half;
#pragma omp simd
  for (int64_t i = 0; i < half; ++i) {
    const float a = x[i], b = x2[i];
    x[i] = a * c[i] - b * s[i];
    x2[i] = b * c[i] + a * s[i];
  }
}

/// Rotates x [tokens, heads, head_dim] in place (rotate-half convention); row t uses
/// cos/sin[positions[t]], tables of shape [max_positions, head_dim / 2].
void rope_cpu(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
              int64_t heads, int64_t head_dim);

}  // namespace izwi
