#pragma once
// The body of the panel kernels, included by one .cpp per instruction set (each compiled with its
// own -m flags): everything here has internal linkage, and kernels/cpu/simd.h puts its vector
// helpers in a namespace per instruction set, so the variants never share a symbol. The file that
// defines IZWI_PANEL_BF16_DOT multiplies bf16 weights with avx512_bf16 dot products.

// GCC 12 warns inside its own AVX-512 headers (GCC bug 105593); before the first immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Where the compiler targets no avx512_bf16 (another architecture), that file is one more copy of
// the portable kernels and is never chosen.
#if defined(IZWI_PANEL_BF16_DOT) && defined(__AVX512BF16__)
#define IZWI_PANEL_DOT_KERNEL 1
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/panel_kernels.h"
#include "kernels/cpu/simd.h"

namespace izwi {
namespace {

// The rows of the next slice a tile kernel prefetches into L2 as it runs (tile_kernel).
struct Prefetch {
  const char* next = nullptr;  ///< the first row it prefetches
  int64_t every = 0;           ///< one row every that many steps; 0 = none
};

#if IZWI_SIMD_LANES > 0
constexpr int kLanes = simd::kLanes;
#else
constexpr int kLanes = 8;  // plain loops over 8 floats, which the compiler vectorises as it can
#endif
// Two vectors of outputs per panel row; the tokens of a tile take the remaining registers (one
// accumulator per vector and token, plus the two weight vectors and one broadcast input).
constexpr int kVectors = 2;
constexpr int64_t kPanelRows = kVectors * kLanes;
#if IZWI_SIMD_LANES > 0
constexpr int kMaxTileTokens = (simd::kRegisters - kVectors - 1) / kVectors;
#else
constexpr int kMaxTileTokens = 4;
#endif
// Input columns per pass: a tile's slice of the panel (256 x 32 floats = 32 KiB at most) stays in
// L1/L2 while every token tile of the pass rereads it, and a tile's inputs fit in L1.
constexpr int64_t kDepth = 256;
#if defined(IZWI_PANEL_DOT_KERNEL)
constexpr int64_t kBf16Group = 2;
#else
constexpr int64_t kBf16Group = 1;
#endif

template <WeightFormat F>
constexpr size_t element_bytes() {
  return F == WeightFormat::F32 ? sizeof(float) : sizeof(uint16_t);
}

#if IZWI_SIMD_LANES > 0
template <WeightFormat F>
inline simd::Vec load_weights(const void* panel, int64_t offset) {
  if constexpr (F == WeightFormat::F32) {
    return simd::load(static_cast<const float*>(panel) + offset);
  } else {
    return simd::load_bf16(static_cast<const uint16_t*>(panel) + offset);
  }
}

// tile[t][0 .. kPanelRows) (+)= sum over k < depth of panel[k][.] * x[k * MR + t], for MR tokens.
// With prefetch.every > 0, every that many steps also prefetch one row of the weights that follow
// this slice, from prefetch.next on (next_slice_share says which).
template <int MR, WeightFormat F>
void tile_kernel(const void* panel, int64_t depth, const float* x, float* tile, bool accumulate, Prefetch prefetch) {
  constexpr int64_t kRowBytes = kPanelRows * static_cast<int64_t>(element_bytes<F>());
  int64_t countdown = 0;
  simd::Vec acc[MR][kVectors];
#pragma GCC unroll 16
  for (int t = 0; t < MR; ++t) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      acc[t][v] = accumulate ? simd::load(tile + t * kPanelRows + v * kLanes) : simd::zero();
    }
  }
  for (int64_t k = 0; k < depth; ++k) {
    if (prefetch.every > 0 && --countdown < 0) {
      countdown = prefetch.every - 1;
#pragma GCC unroll 2
      for (int64_t line = 0; line < kRowBytes; line += 64) _mm_prefetch(prefetch.next + line, _MM_HINT_T1);
      prefetch.next += kRowBytes;
    }
    simd::Vec w[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) w[v] = load_weights<F>(panel, k * kPanelRows + v * kLanes);
#pragma GCC unroll 16
    for (int t = 0; t < MR; ++t) {
      const simd::Vec b = simd::broadcast(x[k * MR + t]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) acc[t][v] = simd::fmadd(w[v], b, acc[t][v]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < MR; ++t) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) simd::store(tile + t * kPanelRows + v * kLanes, acc[t][v]);
  }
}
#if defined(IZWI_PANEL_DOT_KERNEL)
// The same tile for bf16 weights in column pairs: one vdpbf16ps multiplies 16 outputs by two
// columns at once, x[p * MR + t] holding token t's inputs of columns 2p and 2p + 1 as bf16.
template <int MR>
void tile_kernel_dot(const void* panel, int64_t pairs, const uint32_t* x, float* tile, bool accumulate,
                     Prefetch prefetch) {
  constexpr int64_t kPairBytes = kPanelRows * 2 * static_cast<int64_t>(sizeof(uint16_t));
  const char* base = static_cast<const char*>(panel);
  int64_t countdown = 0;
  __m512 acc[MR][kVectors];
#pragma GCC unroll 16
  for (int t = 0; t < MR; ++t) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      acc[t][v] = accumulate ? _mm512_loadu_ps(tile + t * kPanelRows + v * kLanes) : _mm512_setzero_ps();
    }
  }
  for (int64_t p = 0; p < pairs; ++p) {
    if (prefetch.every > 0 && --countdown < 0) {
      countdown = prefetch.every - 1;
#pragma GCC unroll 2
      for (int64_t line = 0; line < kPairBytes; line += 64) _mm_prefetch(prefetch.next + line, _MM_HINT_T1);
      prefetch.next += kPairBytes;
    }
    __m512bh w[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) w[v] = (__m512bh)_mm512_loadu_si512(base + p * kPairBytes + v * 64);
#pragma GCC unroll 16
    for (int t = 0; t < MR; ++t) {
      const __m512bh b = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[p * MR + t]));
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], w[v], b);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < MR; ++t) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) _mm512_storeu_ps(tile + t * kPanelRows + v * kLanes, acc[t][v]);
  }
}
#endif
#else
template <WeightFormat F>
inline float weight_at(const void* panel, int64_t offset) {
  if constexpr (F == WeightFormat::F32) {
    return static_cast<const float*>(panel)[offset];
  } else {
    return bf16_to_float(static_cast<const uint16_t*>(panel)[offset]);
  }
}

template <int MR, WeightFormat F>
void tile_kernel(const void* panel, int64_t depth, const float* x, float* tile, bool accumulate,
                 Prefetch /*prefetch*/) {
  float acc[MR][kPanelRows];
  for (int t = 0; t < MR; ++t) {
    for (int64_t i = 0; i < kPanelRows; ++i) acc[t][i] = accumulate ? tile[t * kPanelRows + i] : 0.0f;
  }
  for (int64_t k = 0; k < depth; ++k) {
    float w[kPanelRows];
    for (int64_t i = 0; i < kPanelRows; ++i) w[i] = weight_at<F>(panel, k * kPanelRows + i);
    for (int t = 0; t < MR; ++t) {
      const float b = x[k * MR + t];
      for (int64_t i = 0; i < kPanelRows; ++i) acc[t][i] += w[i] * b;
    }
  }
  for (int t = 0; t < MR; ++t) std::memcpy(tile + t * kPanelRows, acc[t], sizeof(acc[t]));
}
#endif

using TileKernel = void (*)(const void*, int64_t, const float*, float*, bool, Prefetch);

template <WeightFormat F, int... I>
constexpr std::array<TileKernel, sizeof...(I)> tile_kernels(std::integer_sequence<int, I...>) {
  return {{&tile_kernel<I + 1, F>...}};
}

#if defined(IZWI_PANEL_DOT_KERNEL)
using DotTileKernel = void (*)(const void*, int64_t, const uint32_t*, float*, bool, Prefetch);

template <int... I>
constexpr std::array<DotTileKernel, sizeof...(I)> dot_tile_kernels(std::integer_sequence<int, I...>) {
  return {{&tile_kernel_dot<I + 1>...}};
}

// float32 -> bf16, rounding to nearest even (NaN stays NaN: its high bits are kept).
inline uint32_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}
#endif

// Tiles of equal size (16 tokens: 8 + 8, not 14 + 2) keep every tile's register use high.
int64_t tile_count(int64_t tokens) { return (tokens + kMaxTileTokens - 1) / kMaxTileTokens; }

// Tile i (tokens [t0, t0 + n)) is stored from packed + t0 * in, element (k, t) at k * n + t; for
// bf16 pairs, pair (p, t) at p * n + t in 32-bit words from the same start.
void pack_inputs(const float* x, int64_t tokens, int64_t in, WeightFormat format, float* packed) {
  const int64_t tiles = tile_count(tokens);
  for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
    const int64_t n = (tokens - t0) / (tiles - i);
#if defined(IZWI_PANEL_DOT_KERNEL)
    if (format == WeightFormat::BF16) {
      uint32_t* dst = reinterpret_cast<uint32_t*>(packed + t0 * in);
      for (int64_t t = 0; t < n; ++t) {
        const float* src = x + (t0 + t) * in;
        for (int64_t k = 0; k < in; k += 2) {
          const uint32_t high = k + 1 < in ? to_bf16(src[k + 1]) : 0u;
          dst[(k / 2) * n + t] = to_bf16(src[k]) | (high << 16);
        }
      }
      t0 += n;
      continue;
    }
#endif
    (void)format;
    float* dst = packed + t0 * in;
    for (int64_t t = 0; t < n; ++t) {
      const float* src = x + (t0 + t) * in;
      for (int64_t k = 0; k < in; ++k) dst[k * n + t] = src[k];
    }
    t0 += n;
  }
}

// What tile i of `tiles` prefetches of the slice after this one (`depth` rows of `row_bytes` at
// `slice`): its share of the rows, one every `tiles` steps, so the memory stream runs through the
// whole pass while the tiles compute from cache. One tile (a token or a few) streams the slice it
// multiplies and leaves the rest to the hardware prefetchers.
Prefetch next_slice_share(const char* slice, int64_t depth, size_t row_bytes, int64_t i, int64_t tiles) {
  if (tiles == 1) return {};
  const int64_t share = (depth + tiles - 1) / tiles;
  return {slice + static_cast<size_t>(depth + i * share) * row_bytes, tiles};
}

// Writes a panel's finished tile [tokens][kPanelRows] to y, adding the bias.
void store_panel(const PanelProduct& p, int64_t panel, const float* tile) {
  const int64_t row0 = panel * kPanelRows, rows = std::min(kPanelRows, p.out - row0);
  for (int64_t t = 0; t < p.tokens; ++t) {
    float* dst = p.y + t * p.out + row0;
    const float* src = tile + t * kPanelRows;
    if (p.bias != nullptr) {
      for (int64_t i = 0; i < rows; ++i) dst[i] = src[i] + p.bias[row0 + i];
    } else {
      std::memcpy(dst, src, static_cast<size_t>(rows) * sizeof(float));
    }
  }
}

#if defined(IZWI_PANEL_DOT_KERNEL)
void run_panels_dot(const PanelProduct& p, int64_t panel_begin, int64_t panel_end) {
  static constexpr auto kKernels = dot_tile_kernels(std::make_integer_sequence<int, kMaxTileTokens>{});
  const int64_t tiles = tile_count(p.tokens);
  const int64_t pairs = (p.in + 1) / 2;
  thread_local std::vector<float> tile;
  tile.resize(static_cast<size_t>(p.tokens * kPanelRows));
  const size_t pair_bytes = static_cast<size_t>(kPanelRows * 2) * sizeof(uint16_t);
  const uint32_t* x = reinterpret_cast<const uint32_t*>(p.x);
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const char* base = static_cast<const char*>(p.packed) + static_cast<size_t>(panel * pairs) * pair_bytes;
    for (int64_t p0 = 0; p0 < pairs; p0 += kDepth / 2) {
      const int64_t depth = std::min(kDepth / 2, pairs - p0);
      for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
        const int64_t tokens = (p.tokens - t0) / (tiles - i);
        const char* slice = base + static_cast<size_t>(p0) * pair_bytes;
        kKernels[tokens - 1](slice, depth, x + t0 * p.in + p0 * tokens, tile.data() + t0 * kPanelRows, p0 > 0,
                             next_slice_share(slice, depth, pair_bytes, i, tiles));
        t0 += tokens;
      }
    }
    store_panel(p, panel, tile.data());
  }
}
#endif

template <WeightFormat F>
void run_panels(const PanelProduct& p, int64_t panel_begin, int64_t panel_end) {
  static constexpr auto kKernels = tile_kernels<F>(std::make_integer_sequence<int, kMaxTileTokens>{});
  const int64_t tiles = tile_count(p.tokens);
  thread_local std::vector<float> tile;
  tile.resize(static_cast<size_t>(p.tokens * kPanelRows));
  const size_t row_bytes = static_cast<size_t>(kPanelRows) * element_bytes<F>();
  const size_t panel_bytes = static_cast<size_t>(p.in) * row_bytes;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const char* base = static_cast<const char*>(p.packed) + static_cast<size_t>(panel) * panel_bytes;
    for (int64_t k0 = 0; k0 < p.in; k0 += kDepth) {
      const int64_t depth = std::min(kDepth, p.in - k0);
      const char* slice = base + static_cast<size_t>(k0) * row_bytes;
      for (int64_t i = 0, t0 = 0; i < tiles; ++i) {
        const int64_t tokens = (p.tokens - t0) / (tiles - i);
        kKernels[tokens - 1](slice, depth, p.x + t0 * p.in + k0 * tokens, tile.data() + t0 * kPanelRows, k0 > 0,
                             next_slice_share(slice, depth, row_bytes, i, tiles));
        t0 += tokens;
      }
    }
    store_panel(p, panel, tile.data());
  }
}

void run(const PanelProduct& product, int64_t panel_begin, int64_t panel_end) {
  if (product.format == WeightFormat::F32) {
    run_panels<WeightFormat::F32>(product, panel_begin, panel_end);
  } else {
#if defined(IZWI_PANEL_DOT_KERNEL)
    run_panels_dot(product, panel_begin, panel_end);
#else
    run_panels<WeightFormat::BF16>(product, panel_begin, panel_end);
#endif
  }
}

}  // namespace
}  // namespace izwi
