#include "kernels/cpu/silu_mul_cpu.h"

// GCC 12 warns inside its own AVX-512 headers (GCC bug 105593) wherever their intrinsics are
// inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <ATen/Parallel.h>

#include <cmath>

#include "kernels/cpu/simd.h"

namespace izwi {

void silu_mul_cpu(const float* gate_up, float* out, int64_t tokens, int64_t width) {
  at::parallel_for(0, tokens, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* g = gate_up + t * 2 * width;
      const float* u = g + width;
      float* o = out + t * width;
      int64_t i = 0;
#if IZWI_SIMD_LANES > 0
      // libm's expf is scalar: the vector exp keeps this a pass over memory, not over exp calls.
      for (; i + simd::kLanes <= width; i += simd::kLanes) {
        const simd::Vec gate = simd::load(g + i);
        const simd::Vec sigmoid_inverse = simd::add(simd::broadcast(1.0f), simd::exp(simd::sub(simd::zero(), gate)));
        simd::store(o + i, simd::mul(simd::div(gate, sigmoid_inverse), simd::load(u + i)));
      }
#endif
      for (; i < width; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    }
  });
}

}  // namespace izwi
