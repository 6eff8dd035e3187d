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
constexpr bool kBf16RowPairs = IZWI_SIMD_LANES > 0 && kBf16Group == 1;
static_assert(!kBf16RowPairs || kVectors == 2, "row pairs widen a panel row into exactly two vectors");

template <WeightFormat F>
constexpr size_t element_bytes() {
  return F == WeightFormat::F32 ? sizeof(float) : sizeof(uint16_t);
}

#if IZWI_SIMD_LANES > 0
// Panel row k's weights as kVectors vectors (bf16 rows in pairs: panel_kernels.h).
template <WeightFormat F>
inline void load_weights(const void* panel, int64_t k, simd::Vec (&w)[kVectors]) {
  if constexpr (F == WeightFormat::F32) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v)
      w[v] = simd::load(static_cast<const float*>(panel) + k * kPanelRows + v * kLanes);
  } else {
    simd::load_bf16_pairs(static_cast<const uint16_t*>(panel) + k * kPanelRows, w[0], w[1]);
  }
}

// tile[t][0 .. kPanelRows) (+)= sum over k < depth of panel[k][.] * input(k, t), for MR tokens:
// input(k, t) = x[k * MR + t] in the arranged inputs (pack_inputs), or x[columns[k] + t] read in
// place when kColumns (a channels-first signal's columns; see PanelProduct::column_offsets).
// With prefetch.every > 0, every that many steps also prefetch one row of the weights that follow
// this slice, from prefetch.next on (next_slice_share says which).
template <int MR, WeightFormat F, bool kColumns>
void tile_kernel(const void* panel, int64_t depth, const float* x, const int64_t* columns, float* tile, bool accumulate,
                 Prefetch prefetch) {
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
    load_weights<F>(panel, k, w);
    const float* input = kColumns ? x + columns[k] : x + k * MR;
#pragma GCC unroll 16
    for (int t = 0; t < MR; ++t) {
      const simd::Vec b = simd::broadcast(input[t]);
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

template <int MR, WeightFormat F, bool kColumns>
void tile_kernel(const void* panel, int64_t depth, const float* x, const int64_t* columns, float* tile, bool accumulate,
                 Prefetch /*prefetch*/) {
  float acc[MR][kPanelRows];
  for (int t = 0; t < MR; ++t) {
    for (int64_t i = 0; i < kPanelRows; ++i) acc[t][i] = accumulate ? tile[t * kPanelRows + i] : 0.0f;
  }
  for (int64_t k = 0; k < depth; ++k) {
    float w[kPanelRows];
    for (int64_t i = 0; i < kPanelRows; ++i) w[i] = weight_at<F>(panel, k * kPanelRows + i);
    const float* input = kColumns ? x + columns[k] : x + k * MR;
    for (int t = 0; t < MR; ++t) {
      const float b = input[t];
      for (int64_t i = 0; i < kPanelRows; ++i) acc[t][i] += w[i] * b;
    }
  }
  for (int t = 0; t < MR; ++t) std::memcpy(tile + t * kPanelRows, acc[t], sizeof(acc[t]));
}
#endif

using TileKernel = void (*)(const void*, int64_t, const float*, const int64_t*, float*, bool, Prefetch);

template <WeightFormat F, bool kColumns, int... I>
constexpr std::array<TileKernel, sizeof...(I)> tile_kernels(std::integer_sequence<int, I...>) {
  return {{&tile_kernel<I + 1, F, kColumns>...}};
}

#if defined(IZWI_PANEL_DOT_KERNEL)
using DotTileKernel = void (*)(const void*, int64_t, const uint32_t*, float*, bool, Prefetch);

template <int... I>
constexpr std::array<DotTileKernel, sizeof...(I)> dot_tile_kernels(std::integer_sequence<int, I...>) {
  return {{&tile_kernel_dot<I + 1>...}};
}
#endif

int64_t tiles_of(int64_t tokens) { return tile_count(tokens, kMaxTileTokens); }

#if IZWI_SIMD_LANES > 0
// Stores the first n lanes of v at run, the next of a tile's runs that are written front to back
// and end at `end`: a whole vector where the tile's room holds it (the lanes past n land where
// the next run goes), a masked store only near the end. AVX2's masked store is microcoded on AMD
// before Zen 4 (about 40 micro-ops on Zen 3) and made the arrangement 3-4x slower there.
inline void store_run(float* run, simd::Vec v, int64_t n, const float* end) {
  if (run + kLanes <= end) {
    simd::store(run, v);
  } else {
    simd::store_first(run, v, n);
  }
}

#if defined(IZWI_PANEL_DOT_KERNEL)
// float_to_bf16 of 16 floats, each result in the low half of its 32-bit lane.
inline __m512i to_bf16_bits(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
  return _mm512_mask_mov_epi32(rounded, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
}
#endif

// Arranges a tile of n tokens whose rows are `words` consecutive 32-bit words (`row(t, w0, m)`
// returns row t's words [w0, w0 + m) in a vector, zero past m): word w of token t goes to
// dst[w * n + t]. A vector of words of every token at a time, transposed in registers: copied one
// element at a time, the arrangement took a tenth of a small product's time on the calling thread
// while the other threads waited.
template <typename Row>
void arrange_rows(int64_t n, int64_t words, float* dst, const Row& row) {
  static_assert(kMaxTileTokens <= kLanes, "a tile's tokens must fit one transposed block");
  const float* end = dst + words * n;
  for (int64_t w0 = 0; w0 < words; w0 += kLanes) {
    const int64_t m = std::min<int64_t>(kLanes, words - w0);
    simd::Vec r[kLanes];
    for (int t = 0; t < kLanes; ++t) r[t] = t < n ? row(t, w0, m) : simd::zero();
    simd::transpose(r);
    for (int64_t j = 0; j < m; ++j) store_run(dst + (w0 + j) * n, r[j], n, end);
  }
}
#endif

// Tile i (tokens [t0, t0 + n)) is stored from packed + t0 * in, element (k, t) at k * n + t; for
// bf16 pairs, pair (p, t) at p * n + t in 32-bit words from the same start. With a vector unit, rows
// of consecutive columns (no column offsets) go through arrange_rows. Otherwise, where the tokens are
// consecutive in memory (token_stride 1, a channels-first input), each column's n inputs are one
// contiguous run; else each token's row is read in turn.
void pack_inputs(const PanelInputs& x, int64_t tokens, int64_t in, WeightFormat format, float* packed,
                 int64_t tile_begin, int64_t tile_end) {
  const int64_t tiles = tiles_of(tokens);
  const auto offset = [&](int64_t k) { return x.column_offsets != nullptr ? x.column_offsets[k] : k; };
  for (int64_t i = tile_begin; i < tile_end; ++i) {
    const int64_t t0 = tile_start(tokens, tiles, i), n = tile_start(tokens, tiles, i + 1) - t0;
    const float* first = x.data + t0 * x.token_stride;
#if IZWI_SIMD_LANES > 0
    // Rows of consecutive columns (every row-major input): whole vectors of each row, transposed.
    if (x.column_offsets == nullptr) {
#if defined(IZWI_PANEL_DOT_KERNEL)
      if (format == WeightFormat::BF16) {
        // Word p of a row is its columns 2p and 2p + 1 as bf16 (low, high): the row rounded to
        // bf16 and read as 32-bit words.
        arrange_rows(n, (in + 1) / 2, packed + t0 * in, [&](int64_t t, int64_t w0, int64_t m) {
          const float* src = first + t * x.token_stride + 2 * w0;
          const int64_t columns = std::min(2 * m, in - 2 * w0);
          const __m512 low = simd::load_first(src, std::min<int64_t>(columns, 16));
          const __m512 high = columns > 16 ? simd::load_first(src + 16, columns - 16) : _mm512_setzero_ps();
          const __m256i low_bits = _mm512_cvtepi32_epi16(to_bf16_bits(low));
          const __m256i high_bits = _mm512_cvtepi32_epi16(to_bf16_bits(high));
          return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(low_bits), high_bits, 1));
        });
        continue;
      }
#endif
      arrange_rows(n, in, packed + t0 * in, [&](int64_t t, int64_t w0, int64_t m) {
        return simd::load_first(first + t * x.token_stride + w0, m);
      });
      continue;
    }
#endif
#if defined(IZWI_PANEL_DOT_KERNEL)
    if (format == WeightFormat::BF16) {
      uint32_t* dst = reinterpret_cast<uint32_t*>(packed + t0 * in);
      for (int64_t k = 0; k < in; k += 2) {
        const float* low = first + offset(k);
        const float* high = k + 1 < in ? first + offset(k + 1) : nullptr;
        for (int64_t t = 0; t < n; ++t) {
          const uint32_t high_bits = high != nullptr ? float_to_bf16(high[t * x.token_stride]) : 0u;
          dst[(k / 2) * n + t] = float_to_bf16(low[t * x.token_stride]) | (high_bits << 16);
        }
      }
      continue;
    }
#endif
    (void)format;
    float* dst = packed + t0 * in;
    if (x.token_stride == 1) {
      // A column's run of a tile is a few dozen bytes: one vector copy (a tile never has more
      // tokens than a vector has lanes), not a call to memcpy.
      for (int64_t k = 0; k < in; ++k) {
#if IZWI_SIMD_LANES > 0
        static_assert(kMaxTileTokens <= kLanes, "a tile's run must fit one vector");
        store_run(dst + k * n, simd::load_first(first + offset(k), n), n, dst + in * n);
#else
        std::memcpy(dst + k * n, first + offset(k), static_cast<size_t>(n) * sizeof(float));
#endif
      }
    } else {
      for (int64_t t = 0; t < n; ++t) {
        const float* src = first + t * x.token_stride;
        for (int64_t k = 0; k < in; ++k) dst[k * n + t] = src[offset(k)];
      }
    }
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

// Writes tokens [t_begin, t_end) of a panel's finished tile [tokens][kPanelRows] to y, adding the
// bias.
void store_panel(const PanelProduct& p, int64_t panel, const float* tile, int64_t t_begin, int64_t t_end) {
  const int64_t row0 = panel * kPanelRows, rows = std::min(kPanelRows, p.out - row0);
  const PanelOutputs& y = p.y;
  if (y.out_stride == 1) {
    for (int64_t t = t_begin; t < t_end; ++t) {
      float* dst = y.data + t * y.token_stride + row0;
      const float* src = tile + t * kPanelRows;
      if (p.bias != nullptr) {
        for (int64_t i = 0; i < rows; ++i) dst[i] = src[i] + p.bias[row0 + i];
      } else {
        std::memcpy(dst, src, static_cast<size_t>(rows) * sizeof(float));
      }
    }
    return;
  }
  // Channels-first: each output row's tokens are consecutive.
  for (int64_t i = 0; i < rows; ++i) {
    float* dst = y.data + (row0 + i) * y.out_stride;
    const float bias = p.bias != nullptr ? p.bias[row0 + i] : 0.0f;
    for (int64_t t = t_begin; t < t_end; ++t) dst[t * y.token_stride] = tile[t * kPanelRows + i] + bias;
  }
}

// Weights that stay in L2 (every x86 core this runs on has 512 KiB or more) while a block of
// tokens' inputs, kBlockInputBytes of them, is multiplied by all of them.
constexpr size_t kCachedWeightBytes = size_t{384} << 10;
constexpr size_t kBlockInputBytes = size_t{192} << 10;

// Token tiles per block. Few weights and many tokens (the codec's convolutions: 0.25 MB of weights,
// megabytes of inputs per chunk): the weights stay cached while each block of tokens passes
// through all of them once, instead of every panel rereading all the inputs from L3. Otherwise
// (decode, prefill of large matrices) one block: each weight slice is read once from memory and
// reused by every tile while cached.
int64_t tiles_per_block(int64_t in, size_t weight_bytes, int64_t tiles) {
  if (weight_bytes > kCachedWeightBytes) return tiles;
  const size_t tile_input_bytes = static_cast<size_t>(kMaxTileTokens * in) * sizeof(float);
  return std::clamp<int64_t>(static_cast<int64_t>(kBlockInputBytes / std::max<size_t>(tile_input_bytes, 1)), 1, tiles);
}

// The loops around a tile kernel: blocks of token tiles, then panels, then slices of kDepth input
// columns (`steps` of `step_bytes` per panel row group, `slice_steps` per slice), then the block's
// tiles. kernel(tokens, slice, depth, t0, s0, tile, accumulate, prefetch) runs the tile of `tokens`
// tokens from t0 over the slice's `depth` steps from step s0.
template <typename Kernel>
void run_tiles(const PanelProduct& p, int64_t panel_begin, int64_t panel_end, int64_t steps, int64_t slice_steps,
               size_t step_bytes, const Kernel& kernel) {
  const int64_t tiles = tiles_of(p.tokens);
  const size_t panel_bytes = static_cast<size_t>(steps) * step_bytes;
  const int64_t block = tiles_per_block(p.in, static_cast<size_t>(panel_end - panel_begin) * panel_bytes, tiles);
  thread_local std::vector<float> tile;
  // Grown, never shrunk: a resize up again would zero the new part on every call.
  if (tile.size() < static_cast<size_t>(p.tokens * kPanelRows)) tile.resize(static_cast<size_t>(p.tokens * kPanelRows));
  for (int64_t b0 = 0; b0 < tiles; b0 += block) {
    const int64_t b1 = std::min(tiles, b0 + block);
    for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
      const char* base = static_cast<const char*>(p.packed) + static_cast<size_t>(panel) * panel_bytes;
      for (int64_t s0 = 0; s0 < steps; s0 += slice_steps) {
        const int64_t depth = std::min(slice_steps, steps - s0);
        const char* slice = base + static_cast<size_t>(s0) * step_bytes;
        for (int64_t i = b0; i < b1; ++i) {
          const int64_t t0 = tile_start(p.tokens, tiles, i), tokens = tile_start(p.tokens, tiles, i + 1) - t0;
          kernel(tokens, slice, depth, t0, s0, tile.data() + t0 * kPanelRows, s0 > 0,
                 next_slice_share(slice, depth, step_bytes, i - b0, b1 - b0));
        }
      }
      store_panel(p, panel, tile.data(), tile_start(p.tokens, tiles, b0), tile_start(p.tokens, tiles, b1));
    }
  }
}

#if defined(IZWI_PANEL_DOT_KERNEL)
void run_panels_dot(const PanelProduct& p, int64_t panel_begin, int64_t panel_end) {
  static constexpr auto kKernels = dot_tile_kernels(std::make_integer_sequence<int, kMaxTileTokens>{});
  const size_t pair_bytes = static_cast<size_t>(kPanelRows * 2) * sizeof(uint16_t);
  run_tiles(p, panel_begin, panel_end, (p.in + 1) / 2, kDepth / 2, pair_bytes,
            [&p](int64_t tokens, const char* slice, int64_t depth, int64_t t0, int64_t s0, float* tile, bool accumulate,
                 Prefetch prefetch) {
              const float* x = p.x + t0 * p.in + s0 * tokens;
              kKernels[tokens - 1](slice, depth, reinterpret_cast<const uint32_t*>(x), tile, accumulate, prefetch);
            });
}
#endif

template <WeightFormat F>
void run_panels(const PanelProduct& p, int64_t panel_begin, int64_t panel_end) {
  static constexpr auto kArranged = tile_kernels<F, false>(std::make_integer_sequence<int, kMaxTileTokens>{});
  static constexpr auto kColumns = tile_kernels<F, true>(std::make_integer_sequence<int, kMaxTileTokens>{});
  const size_t row_bytes = static_cast<size_t>(kPanelRows) * element_bytes<F>();
  if (p.column_offsets != nullptr) {
    run_tiles(p, panel_begin, panel_end, p.in, kDepth, row_bytes,
              [&p](int64_t tokens, const char* slice, int64_t depth, int64_t t0, int64_t s0, float* tile,
                   bool accumulate, Prefetch prefetch) {
                kColumns[tokens - 1](slice, depth, p.x + t0, p.column_offsets + s0, tile, accumulate, prefetch);
              });
    return;
  }
  run_tiles(p, panel_begin, panel_end, p.in, kDepth, row_bytes,
            [&p](int64_t tokens, const char* slice, int64_t depth, int64_t t0, int64_t s0, float* tile, bool accumulate,
                 Prefetch prefetch) {
              kArranged[tokens - 1](slice, depth, p.x + t0 * p.in + s0 * tokens, nullptr, tile, accumulate, prefetch);
            });
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
