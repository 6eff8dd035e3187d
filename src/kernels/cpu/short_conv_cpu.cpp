#include "kernels/cpu/short_conv_cpu.h"

#include <cstring>

namespace izwi {

void short_conv_cpu(const float* bx, int64_t length, int64_t channels, int64_t kernel, const float* weight_t,
                    const float* bias, float* state, float* window, float* out) {
  const int64_t width = kernel - 1;
  const size_t row_bytes = static_cast<size_t>(channels) * sizeof(float);
  std::memcpy(window, state, static_cast<size_t>(width) * row_bytes);
  std::memcpy(window + width * channels, bx, static_cast<size_t>(length) * row_bytes);
  for (int64_t t = 0; t < length; ++t) {
    float* o = out + t * channels;
    if (bias != nullptr) {
      std::memcpy(o, bias, row_bytes);
    } else {
      std::memset(o, 0, row_bytes);
    }
    for (int64_t k = 0; k < kernel; ++k) {
      const float* w = weight_t + k * channels;
      const float* x = window + (t + k) * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) o[c] += w[c] * x[c];
    }
  }
  std::memcpy(state, window + length * channels, static_cast<size_t>(width) * row_bytes);
}

}  // namespace izwi
