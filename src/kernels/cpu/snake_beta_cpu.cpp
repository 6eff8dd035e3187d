#include "kernels/cpu/snake_beta_cpu.h"

// GCC 12 warns inside its own AVX-512 headers (GCC bug 105593) wherever their intrinsics are
// inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/simd.h"

namespace izwi {

namespace {

// Past this |alpha * x| the vector reduction by pi loses bits (k * pi's high part stops being
// exact); such samples, which no trained codec produces, take libm's sin.
constexpr float kVectorSinLimit = 65536.0f;
// Samples per task of the thread pool.
constexpr int64_t kGrainSamples = int64_t{16} << 10;

inline float snake(float x, float alpha, float inv_beta) {
  const float s = std::sin(alpha * x);
  return x + inv_beta * s * s;
}

#if IZWI_SIMD_LANES > 0
// n = min(length - i, kLanes) samples from `src` through the vector path into `dst`; a short
// tail goes through a zero-padded copy so that its samples see the same arithmetic.
void snake_lanes(const float* src, float* dst, int64_t n, simd::Vec alpha, simd::Vec inv_beta, float alpha_scalar,
                 float inv_beta_scalar) {
  float padded[simd::kLanes];
  const float* in = src;
  if (n < simd::kLanes) {
    std::fill(padded, padded + simd::kLanes, 0.0f);
    std::memcpy(padded, src, static_cast<size_t>(n) * sizeof(float));
    in = padded;
  }
  const simd::Vec x = simd::load(in);
  const simd::Vec s = simd::sin_squared(simd::mul(x, alpha));
  float result[simd::kLanes];
  simd::store(result, simd::fmadd(s, inv_beta, x));
  for (int64_t j = 0; j < n; ++j) {
    dst[j] =
        std::fabs(alpha_scalar * src[j]) <= kVectorSinLimit ? result[j] : snake(src[j], alpha_scalar, inv_beta_scalar);
  }
}
#endif

}  // namespace

void snake_beta_cpu(const float* x, const float* alpha, const float* inv_beta, float* out, int64_t rows,
                    int64_t channels, int64_t length, int64_t out_stride) {
  at::parallel_for(
      0, rows, std::max<int64_t>(1, kGrainSamples / std::max<int64_t>(length, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t c = r % channels;
          const float* src = x + r * length;
          float* dst = out + r * out_stride;
#if IZWI_SIMD_LANES > 0
          const simd::Vec a = simd::broadcast(alpha[c]), b = simd::broadcast(inv_beta[c]);
          for (int64_t i = 0; i < length; i += simd::kLanes) {
            snake_lanes(src + i, dst + i, std::min<int64_t>(simd::kLanes, length - i), a, b, alpha[c], inv_beta[c]);
          }
#else
          for (int64_t i = 0; i < length; ++i) dst[i] = snake(src[i], alpha[c], inv_beta[c]);
#endif
        }
      });
}

}  // namespace izwi
