#pragma once
// One float vector for the hot CPU kernels: 16 lanes with AVX-512, 8 with AVX2 + FMA (x86 CPUs
// without AVX-512, such as AMD Zen 3 and most laptops). Kernels written against it compile to
// either; IZWI_SIMD_LANES == 0 means no vector unit is known and the kernels use plain loops.

#include <cstdint>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

// The inline namespace names the instruction set: files compiled for different ones (the panel
// kernels' runtime-dispatched variants) then define different functions, not one function twice.
#if defined(__AVX512F__)
#define IZWI_SIMD_ISA avx512
#elif defined(__AVX2__) && defined(__FMA__)
#define IZWI_SIMD_ISA avx2
#else
#define IZWI_SIMD_ISA portable
#endif

namespace izwi::simd {
inline namespace IZWI_SIMD_ISA {

#if defined(__AVX512F__)

#define IZWI_SIMD_LANES 16
constexpr int kLanes = 16;
constexpr int kRegisters = 32;
using Vec = __m512;

inline Vec zero() { return _mm512_setzero_ps(); }
inline Vec broadcast(float v) { return _mm512_set1_ps(v); }
inline Vec load(const float* p) { return _mm512_loadu_ps(p); }
/// kLanes bfloat16 values widened to float32 (a bf16 is the top half of a float32).
inline Vec load_bf16(const uint16_t* p) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
}
inline void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float reduce_add(Vec v) { return _mm512_reduce_add_ps(v); }

#elif defined(__AVX2__) && defined(__FMA__)

#define IZWI_SIMD_LANES 8
constexpr int kLanes = 8;
constexpr int kRegisters = 16;
using Vec = __m256;

inline Vec zero() { return _mm256_setzero_ps(); }
inline Vec broadcast(float v) { return _mm256_set1_ps(v); }
inline Vec load(const float* p) { return _mm256_loadu_ps(p); }
inline Vec load_bf16(const uint16_t* p) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float reduce_add(Vec v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

#else

#define IZWI_SIMD_LANES 0
constexpr int kLanes = 0;

#endif

}  // namespace IZWI_SIMD_ISA
}  // namespace izwi::simd
