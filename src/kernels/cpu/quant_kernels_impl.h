#pragma once
// The body of the quantized kernels (quant_kernels.h), included by one .cpp per instruction set,
// each compiled with its own -m flags: everything here has internal linkage, so the variants never
// share a symbol. The AVX-512 file uses vpdpbusd (AVX-512 VNNI); the AVX2 file multiplies bytes
// with vpmaddubsw, which saturates past 32767, so its int8 path multiplies signed weights
// (u - 128, |q| <= 127) by the inputs' magnitudes (llama.cpp's sign trick) and needs no int8 zero
// point; the portable file is plain loops.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/cpu/quant_kernels.h"

#if (defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace izwi {
namespace {

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define IZWI_QUANT_VNNI 1
constexpr int kMaxTileTokens = 4;
#elif defined(__AVX2__) && defined(__F16C__)
#define IZWI_QUANT_AVX2 1
constexpr int kMaxTileTokens = 2;  // 16 ymm registers: 2 tokens x (2 int32 + 2 float) sums
#else
constexpr int kMaxTileTokens = 4;
#endif

inline int32_t load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Writes tokens [t0, t0 + MR)'s 16 finished outputs of the panel at row0 (sums[t], before the
// input scale) to y, with the bias.
template <int MR>
void store_tile(const QuantProduct& p, int64_t t0, int64_t row0, const float (&sums)[MR][kQuantPanelRows]) {
  const int64_t rows = std::min(kQuantPanelRows, p.out - row0);
  for (int t = 0; t < MR; ++t) {
    const float sx = p.x_scales[t0 + t];
    float* dst = p.y + (t0 + t) * p.y_stride + row0;
    for (int64_t i = 0; i < rows; ++i) dst[i] = sums[t][i] * sx + (p.bias != nullptr ? p.bias[row0 + i] : 0.0f);
  }
}

#if defined(IZWI_QUANT_VNNI)
template <int MR, WeightFormat F, bool kZeros>
void panel_tile(const QuantProduct& p, const uint8_t* panel, int64_t t0, int64_t row0) {
  const QuantLayout& layout = p.layout;
  const int64_t groups = layout.groups(), stride = layout.padded_in();
  __m512 total[MR];
#pragma GCC unroll 4
  for (int t = 0; t < MR; ++t) total[t] = _mm512_setzero_ps();
  const uint8_t* at = panel;
  for (int64_t g = 0; g < groups; ++g) {
    __m512 scale;
    __m512i zero;
    if constexpr (F == WeightFormat::I8) {
      scale = _mm512_loadu_ps(reinterpret_cast<const float*>(at));
      zero = _mm512_set1_epi32(128);
    } else {
      scale = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)));
      zero = kZeros ? _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 32)))
                    : _mm512_set1_epi32(8);
    }
    at += layout.header_bytes();
    const int64_t blocks = layout.group_columns(g) / layout.block_columns();
    const int8_t* x = p.x + t0 * stride + g * layout.group_size;
    // Two sums per token: consecutive vpdpbusd of one token do not wait for each other.
    __m512i acc[MR][2];
#pragma GCC unroll 4
    for (int t = 0; t < MR; ++t) acc[t][0] = acc[t][1] = _mm512_setzero_si512();
    if constexpr (F == WeightFormat::I8) {
      int64_t b = 0;
      for (; b + 1 < blocks; b += 2) {
        const __m512i w0 = _mm512_loadu_si512(at + b * kQuantBlockBytes);
        const __m512i w1 = _mm512_loadu_si512(at + (b + 1) * kQuantBlockBytes);
#pragma GCC unroll 4
        for (int t = 0; t < MR; ++t) {
          const int8_t* xt = x + t * stride + 4 * b;
          acc[t][0] = _mm512_dpbusd_epi32(acc[t][0], w0, _mm512_set1_epi32(load4(xt)));
          acc[t][1] = _mm512_dpbusd_epi32(acc[t][1], w1, _mm512_set1_epi32(load4(xt + 4)));
        }
      }
      if (b < blocks) {
        const __m512i w0 = _mm512_loadu_si512(at + b * kQuantBlockBytes);
#pragma GCC unroll 4
        for (int t = 0; t < MR; ++t) {
          acc[t][0] = _mm512_dpbusd_epi32(acc[t][0], w0, _mm512_set1_epi32(load4(x + t * stride + 4 * b)));
        }
      }
    } else {
      const __m512i low_nibbles = _mm512_set1_epi8(0x0F);
      for (int64_t b = 0; b < blocks; ++b) {
        const __m512i raw = _mm512_loadu_si512(at + b * kQuantBlockBytes);
        const __m512i low = _mm512_and_si512(raw, low_nibbles);
        const __m512i high = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low_nibbles);
#pragma GCC unroll 4
        for (int t = 0; t < MR; ++t) {
          const int8_t* xt = x + t * stride + 8 * b;
          acc[t][0] = _mm512_dpbusd_epi32(acc[t][0], low, _mm512_set1_epi32(load4(xt)));
          acc[t][1] = _mm512_dpbusd_epi32(acc[t][1], high, _mm512_set1_epi32(load4(xt + 4)));
        }
      }
    }
    at += blocks * kQuantBlockBytes;
#pragma GCC unroll 4
    for (int t = 0; t < MR; ++t) {
      const __m512i x_sum = _mm512_set1_epi32(p.x_sums[(t0 + t) * groups + g]);
      const __m512i dot = _mm512_sub_epi32(_mm512_add_epi32(acc[t][0], acc[t][1]), _mm512_mullo_epi32(zero, x_sum));
      total[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(dot), total[t]);
    }
  }
  float sums[MR][kQuantPanelRows];
#pragma GCC unroll 4
  for (int t = 0; t < MR; ++t) _mm512_storeu_ps(sums[t], total[t]);
  store_tile<MR>(p, t0, row0, sums);
}
#elif defined(IZWI_QUANT_AVX2)
template <int MR, WeightFormat F, bool kZeros>
void panel_tile(const QuantProduct& p, const uint8_t* panel, int64_t t0, int64_t row0) {
  const QuantLayout& layout = p.layout;
  const int64_t groups = layout.groups(), stride = layout.padded_in();
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 total[MR][2];
#pragma GCC unroll 2
  for (int t = 0; t < MR; ++t) total[t][0] = total[t][1] = _mm256_setzero_ps();
  const uint8_t* at = panel;
  for (int64_t g = 0; g < groups; ++g) {
    __m256 scale[2];
    __m256i zero[2];
    if constexpr (F == WeightFormat::I8) {
      scale[0] = _mm256_loadu_ps(reinterpret_cast<const float*>(at));
      scale[1] = _mm256_loadu_ps(reinterpret_cast<const float*>(at) + 8);
    } else {
      scale[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
      scale[1] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16)));
      for (int h = 0; h < 2; ++h) {
        zero[h] = kZeros ? _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at + 32 + 8 * h)))
                         : _mm256_set1_epi32(8);
      }
    }
    at += layout.header_bytes();
    const int64_t blocks = layout.group_columns(g) / layout.block_columns();
    const int8_t* x = p.x + t0 * stride + g * layout.group_size;
    __m256i acc[MR][2];
#pragma GCC unroll 2
    for (int t = 0; t < MR; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_si256();
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* block = at + b * kQuantBlockBytes;
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32 * h));
        if constexpr (F == WeightFormat::I8) {
          const __m256i q = _mm256_xor_si256(raw, _mm256_set1_epi8(static_cast<char>(0x80)));  // u - 128
          const __m256i magnitude = _mm256_sign_epi8(q, q);
#pragma GCC unroll 2
          for (int t = 0; t < MR; ++t) {
            const __m256i xt = _mm256_set1_epi32(load4(x + t * stride + 4 * b));
            const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(xt, q));
            acc[t][h] = _mm256_add_epi32(acc[t][h], _mm256_madd_epi16(pairs, ones));
          }
        } else {
          const __m256i low_nibbles = _mm256_set1_epi8(0x0F);
          const __m256i low = _mm256_and_si256(raw, low_nibbles);
          const __m256i high = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low_nibbles);
#pragma GCC unroll 2
          for (int t = 0; t < MR; ++t) {
            const int8_t* xt = x + t * stride + 8 * b;
            // Each int16 pair sum is at most 2 * 15 * 127, so the two add without saturating.
            const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(low, _mm256_set1_epi32(load4(xt))),
                                                   _mm256_maddubs_epi16(high, _mm256_set1_epi32(load4(xt + 4))));
            acc[t][h] = _mm256_add_epi32(acc[t][h], _mm256_madd_epi16(pairs, ones));
          }
        }
      }
    }
    at += blocks * kQuantBlockBytes;
#pragma GCC unroll 2
    for (int t = 0; t < MR; ++t) {
      for (int h = 0; h < 2; ++h) {
        __m256i dot = acc[t][h];
        if constexpr (F == WeightFormat::I4) {
          dot = _mm256_sub_epi32(dot, _mm256_mullo_epi32(zero[h], _mm256_set1_epi32(p.x_sums[(t0 + t) * groups + g])));
        }
        total[t][h] = _mm256_fmadd_ps(scale[h], _mm256_cvtepi32_ps(dot), total[t][h]);
      }
    }
  }
  float sums[MR][kQuantPanelRows];
  for (int t = 0; t < MR; ++t) {
    _mm256_storeu_ps(sums[t], total[t][0]);
    _mm256_storeu_ps(sums[t] + 8, total[t][1]);
  }
  store_tile<MR>(p, t0, row0, sums);
}
#else
inline float half_to_float(uint16_t h) {
  const uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return (h & 0x8000u) != 0 ? -magnitude : magnitude;
}

template <int MR, WeightFormat F, bool kZeros>
void panel_tile(const QuantProduct& p, const uint8_t* panel, int64_t t0, int64_t row0) {
  const QuantLayout& layout = p.layout;
  const int64_t groups = layout.groups(), stride = layout.padded_in();
  float total[MR][kQuantPanelRows] = {};
  const uint8_t* at = panel;
  for (int64_t g = 0; g < groups; ++g) {
    float scale[kQuantPanelRows];
    int32_t zero[kQuantPanelRows];
    for (int64_t i = 0; i < kQuantPanelRows; ++i) {
      if constexpr (F == WeightFormat::I8) {
        std::memcpy(&scale[i], at + 4 * i, sizeof(float));
        zero[i] = 128;
      } else {
        uint16_t bits;
        std::memcpy(&bits, at + 2 * i, sizeof(bits));
        scale[i] = half_to_float(bits);
        zero[i] = kZeros ? at[32 + i] : 8;
      }
    }
    at += layout.header_bytes();
    const int64_t blocks = layout.group_columns(g) / layout.block_columns();
    const int8_t* x = p.x + t0 * stride + g * layout.group_size;
    int32_t acc[MR][kQuantPanelRows] = {};
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* block = at + b * kQuantBlockBytes;
      for (int t = 0; t < MR; ++t) {
        const int8_t* xt = x + t * stride + b * layout.block_columns();
        for (int64_t i = 0; i < kQuantPanelRows; ++i) {
          for (int j = 0; j < 4; ++j) {
            const uint8_t byte = block[4 * i + j];
            if constexpr (F == WeightFormat::I8) {
              acc[t][i] += byte * xt[j];
            } else {
              acc[t][i] += (byte & 0x0F) * xt[j] + (byte >> 4) * xt[4 + j];
            }
          }
        }
      }
    }
    at += blocks * kQuantBlockBytes;
    for (int t = 0; t < MR; ++t) {
      const int32_t x_sum = p.x_sums[(t0 + t) * groups + g];
      for (int64_t i = 0; i < kQuantPanelRows; ++i) {
        total[t][i] += scale[i] * static_cast<float>(acc[t][i] - zero[i] * x_sum);
      }
    }
  }
  store_tile<MR>(p, t0, row0, total);
}
#endif

using TileKernel = void (*)(const QuantProduct&, const uint8_t*, int64_t, int64_t);

template <WeightFormat F, bool kZeros, int... I>
constexpr std::array<TileKernel, sizeof...(I)> tile_kernels(std::integer_sequence<int, I...>) {
  return {{&panel_tile<I + 1, F, kZeros>...}};
}

void run(const QuantProduct& p, int64_t panel_begin, int64_t panel_end) {
  using Seq = std::make_integer_sequence<int, kMaxTileTokens>;
  static constexpr auto kInt8 = tile_kernels<WeightFormat::I8, false>(Seq{});
  static constexpr auto kInt4 = tile_kernels<WeightFormat::I4, false>(Seq{});
  static constexpr auto kInt4Zeros = tile_kernels<WeightFormat::I4, true>(Seq{});
  const auto& kernels = p.layout.format == WeightFormat::I8 ? kInt8 : p.layout.zeros ? kInt4Zeros : kInt4;
  const int64_t panel_bytes = p.layout.panel_bytes();
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const uint8_t* base = p.packed + panel * panel_bytes;
    for (int64_t t0 = 0; t0 < p.tokens; t0 += kMaxTileTokens) {
      const int64_t tokens = std::min<int64_t>(kMaxTileTokens, p.tokens - t0);
      kernels[tokens - 1](p, base, t0, panel * kQuantPanelRows);
    }
  }
}

}  // namespace
}  // namespace izwi
