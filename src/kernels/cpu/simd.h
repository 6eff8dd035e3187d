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
/// 2 * kLanes bfloat16 values whose 32-bit word i holds value i (low half) and value i + kLanes
/// (high half), widened to two vectors: a shift and a mask, no widening shuffle.
inline void load_bf16_pairs(const uint16_t* p, Vec& low, Vec& high) {
  const __m512i raw = _mm512_loadu_si512(p);
  low = _mm512_castsi512_ps(_mm512_slli_epi32(raw, 16));
  high = _mm512_castsi512_ps(_mm512_and_si512(raw, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
inline void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
/// The first n (<= kLanes) floats at p, the other lanes zero; and their store. No byte past the
/// n-th is touched.
inline Vec load_first(const float* p, int64_t n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p);
}
inline void store_first(float* p, Vec v, int64_t n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
}
inline Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float reduce_add(Vec v) { return _mm512_reduce_add_ps(v); }
/// out[i] = reduce_add(v[i]) for four vectors at once: their halves added, then the AVX2 sums.
inline void reduce_add4(const Vec (&v)[4], float* out) {
  __m256 h[4];
  for (int i = 0; i < 4; ++i) {
    h[i] = _mm256_add_ps(_mm512_castps512_ps256(v[i]),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v[i]), 1)));
  }
  const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(h[0], h[1]), _mm256_hadd_ps(h[2], h[3]));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
}
inline Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
inline Vec div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
inline Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
inline Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
inline Vec fnmadd(Vec a, Vec b, Vec c) { return _mm512_fnmadd_ps(a, b, c); }
inline Vec round_nearest(Vec v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/// v * 2^n for whole numbers n in [-126, 127].
inline Vec scale_pow2(Vec v, Vec n) { return _mm512_scalef_ps(v, n); }
/// v where x >= limit, 0 elsewhere (and where x is NaN).
inline Vec where_at_least(Vec v, Vec x, Vec limit) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, limit, _CMP_GE_OQ), v);
}

/// The transpose's steps (transpose below): interleaving and pair shuffles within each 128-bit
/// lane, then the exchange of whole lanes. After the first two steps r[4q + c] holds, in its lane
/// l, column 4l + c of rows 4q..4q + 3; the exchange gathers lane l of r[c], r[4 + c], r[8 + c]
/// and r[12 + c] into r[4l + c] (with 8 lanes, lane l of r[c] and r[4 + c]).
inline Vec interleave_low(Vec a, Vec b) { return _mm512_unpacklo_ps(a, b); }
inline Vec interleave_high(Vec a, Vec b) { return _mm512_unpackhi_ps(a, b); }
template <int kImm>
Vec shuffle_pairs(Vec a, Vec b) {
  return _mm512_shuffle_ps(a, b, kImm);
}
inline void exchange_lanes(Vec r[16]) {
  Vec t[16];
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
  }
}

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
inline void load_bf16_pairs(const uint16_t* p, Vec& low, Vec& high) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  low = _mm256_castsi256_ps(_mm256_slli_epi32(raw, 16));
  high = _mm256_castsi256_ps(_mm256_and_si256(raw, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline __m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load_first(const float* p, int64_t n) { return _mm256_maskload_ps(p, first_lanes(n)); }
inline void store_first(float* p, Vec v, int64_t n) { _mm256_maskstore_ps(p, first_lanes(n), v); }
inline Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float reduce_add(Vec v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
/// out[i] = reduce_add(v[i]) for four vectors at once: three pairwise sums across them, then the
/// two halves, where four reductions one by one take four times the shuffles.
inline void reduce_add4(const Vec (&v)[4], float* out) {
  const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
}
inline Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
inline Vec div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
inline Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
inline Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
inline Vec fnmadd(Vec a, Vec b, Vec c) { return _mm256_fnmadd_ps(a, b, c); }
inline Vec round_nearest(Vec v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline Vec scale_pow2(Vec v, Vec n) {
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(v, _mm256_castsi256_ps(exponent));
}
inline Vec where_at_least(Vec v, Vec x, Vec limit) { return _mm256_and_ps(_mm256_cmp_ps(x, limit, _CMP_GE_OQ), v); }
inline Vec interleave_low(Vec a, Vec b) { return _mm256_unpacklo_ps(a, b); }
inline Vec interleave_high(Vec a, Vec b) { return _mm256_unpackhi_ps(a, b); }
template <int kImm>
Vec shuffle_pairs(Vec a, Vec b) {
  return _mm256_shuffle_ps(a, b, kImm);
}
inline void exchange_lanes(Vec r[8]) {
  Vec t[8];
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

#else

#define IZWI_SIMD_LANES 0
constexpr int kLanes = 0;

#endif

#if IZWI_SIMD_LANES > 0
/// Transposes kLanes rows of kLanes floats (or other 32-bit elements) in registers: afterwards
/// r[j] holds element j of every row, in row order.
inline void transpose(Vec r[kLanes]) {
  Vec t[kLanes];
  for (int i = 0; i < kLanes; i += 2) {
    t[i] = interleave_low(r[i], r[i + 1]);
    t[i + 1] = interleave_high(r[i], r[i + 1]);
  }
  for (int i = 0; i < kLanes; i += 4) {
    r[i] = shuffle_pairs<0x44>(t[i], t[i + 2]);
    r[i + 1] = shuffle_pairs<0xEE>(t[i], t[i + 2]);
    r[i + 2] = shuffle_pairs<0x44>(t[i + 1], t[i + 3]);
    r[i + 3] = shuffle_pairs<0xEE>(t[i + 1], t[i + 3]);
  }
  exchange_lanes(r);
}

/// e^x per lane (Cephes' expf: within 2 ulp of std::exp over its range). Inputs are clamped to
/// [-87.3, 88]: below, the result is about 1e-38 instead of a denormal or zero; above, about 1.7e38
/// instead of infinity.
inline Vec exp(Vec x) {
  x = min(max(x, broadcast(-87.3f)), broadcast(88.0f));
  const Vec n = round_nearest(mul(x, broadcast(1.44269504088896341f)));
  Vec r = fnmadd(n, broadcast(0.693359375f), x);  // x - n ln 2, ln 2 in two parts for exactness
  r = fnmadd(n, broadcast(-2.12194440e-4f), r);
  Vec p = broadcast(1.9875691500e-4f);
  p = fmadd(p, r, broadcast(1.3981999507e-3f));
  p = fmadd(p, r, broadcast(8.3334519073e-3f));
  p = fmadd(p, r, broadcast(4.1665795894e-2f));
  p = fmadd(p, r, broadcast(1.6666665459e-1f));
  p = fmadd(p, r, broadcast(5.0000001201e-1f));
  p = fmadd(p, mul(r, r), add(r, broadcast(1.0f)));
  return scale_pow2(p, n);
}

/// e^x per lane as exp, but 0 below its clamp (e^-inf is 0, as a masked-out logit's weight must be).
inline Vec exp_or_zero(Vec x) { return where_at_least(exp(x), x, broadcast(-87.3f)); }

/// sin(y)^2 per lane, within a few ulp of libm's for |y| <= 65536 (past that, k * pi below stops
/// being exact). sin^2 has period pi: y = k pi + r with |r| <= pi / 2 (pi in three parts, Cody and
/// Waite), then sin r from its Taylor series to r^13 (the first term left out is below 1e-9 at pi / 2).
/// The square needs no quadrant or sign.
inline Vec sin_squared(Vec y) {
  const Vec k = round_nearest(mul(y, broadcast(0.318309886183790672f)));
  Vec r = fnmadd(k, broadcast(3.140625f), y);
  r = fnmadd(k, broadcast(9.67502593994140625e-4f), r);
  r = fnmadd(k, broadcast(1.509957990978376432e-7f), r);
  const Vec z = mul(r, r);
  Vec p = broadcast(1.6059043836821614599e-10f);  // 1/13!
  p = fmadd(p, z, broadcast(-2.5052108385441718775e-8f));
  p = fmadd(p, z, broadcast(2.7557319223985890653e-6f));
  p = fmadd(p, z, broadcast(-1.9841269841269841270e-4f));
  p = fmadd(p, z, broadcast(8.3333333333333333333e-3f));
  p = fmadd(p, z, broadcast(-1.6666666666666666667e-1f));
  const Vec s = fmadd(mul(p, z), r, r);
  return mul(s, s);
}
#endif

}  // namespace IZWI_SIMD_ISA
}  // namespace izwi::simd
