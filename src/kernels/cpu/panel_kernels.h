#pragma once
// The register-blocked linear kernel over weights packed in panels, compiled once per instruction
// set (AVX-512, AVX2 + FMA, portable) and chosen at run time from the CPU's features, so one
// binary runs each machine at its best and a portable build (IZWI_NATIVE_ARCH off) still uses
// AVX-512 where it exists.
//
// Panel layout: W [out, in] is cut into panels of `panel_rows` consecutive rows (the last one
// padded with zero rows); panel p holds W[p * panel_rows + i][k] at offset k * panel_rows + i, so
// the kernel reads each panel front to back as one stream and multiplies a vector of outputs by a
// broadcast input: no horizontal sums anywhere. bf16 weights differ in one of two ways. The
// avx512_bf16 variant keeps them in pairs of columns (offset (k / 2) * 2 * panel_rows + 2 * i +
// k % 2, `in` padded to even), the operand layout of its dot-product instruction. The other vector
// variants pair rows i and i + panel_rows / 2 in one 32-bit word (offset k * panel_rows +
// 2 * (i % half) + i / half): a shift and a mask widen both halves of a panel row, where widening
// each half took a shuffle and a shift, and those competed with the multiplications for the FMA
// ports of AVX2 cores.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/linear_cpu.h"

namespace izwi {

/// A product's inputs x [tokens, in]: element (t, k) at data[t * token_stride + offset(k)], where
/// offset(k) = column_offsets[k], or k when column_offsets is null (row-major [tokens, in] has
/// token_stride = in). Offsets let a convolution multiply its input where it lies: column
/// c * taps + j of a channels-first [channels, length] input is at c * length + j * dilation, so
/// no im2col copy is built (float32 weights then read the columns in place; bf16 ones through the
/// kernels' arrangement of the inputs).
struct PanelInputs {
  const float* data = nullptr;
  int64_t token_stride = 0;
  const int64_t* column_offsets = nullptr;
};

/// A product's outputs y [tokens, out]: element (t, o) at data[t * token_stride + o * out_stride];
/// row-major has (out, 1), channels-first [out, tokens] has (1, tokens).
struct PanelOutputs {
  float* data = nullptr;
  int64_t token_stride = 0;
  int64_t out_stride = 1;
};

/// One y = x W^T + b over packed weights.
struct PanelProduct {
  /// [tokens, in] as PanelKernels::pack_inputs arranges it, or, with column_offsets, the inputs
  /// in place: element (t, k) at x[t + column_offsets[k]] (float32 weights only).
  const float* x = nullptr;
  int64_t tokens = 0;
  int64_t in = 0;
  const void* packed = nullptr;
  WeightFormat format = WeightFormat::F32;
  int64_t out = 0;
  const float* bias = nullptr;  ///< [out] or null
  PanelOutputs y;
  const int64_t* column_offsets = nullptr;
};

/// Token tiles: a product of `tokens` tokens runs tile_count(tokens) tiles of (nearly) equal size,
/// tile i starting at tile_start(tokens, tiles, i); equal sizes (16 tokens: 8 + 8, not 14 + 2) keep
/// every tile's register use high. Static: the per-instruction-set kernel files include this
/// header, and no copy compiled with their -m flags may become the one the linker keeps.
static inline int64_t tile_count(int64_t tokens, int64_t max_tile_tokens) {
  return (tokens + max_tile_tokens - 1) / max_tile_tokens;
}
static inline int64_t tile_start(int64_t tokens, int64_t tiles, int64_t i) { return tokens * i / tiles; }

struct PanelKernels {
  const char* name;         ///< "avx512_bf16", "avx512", "avx2" or "portable"
  int64_t panel_rows;       ///< rows per panel; packing and product must agree on it
  int64_t bf16_group;       ///< columns kept together per row for bf16 weights: 1, or 2 (avx512_bf16)
  bool bf16_row_pairs;      ///< bf16 rows i and i + panel_rows / 2 share a 32-bit word (see above)
  int64_t max_tile_tokens;  ///< tokens per tile at most (tile_count)
  /// Rearranges tiles [tile_begin, tile_end) of x into `packed` (tokens x in floats' room for all
  /// tiles) so that each tile of tokens reads its inputs column by column from consecutive
  /// addresses: rows a power-of-two apart would otherwise share L1 sets (2048 floats = 8 KiB
  /// apart) and evict each other. For the avx512_bf16 variant's bf16 weights the inputs are
  /// rounded to bf16 pairs. Tiles are independent: threads may pack disjoint ranges at once.
  void (*pack_inputs)(const PanelInputs& x, int64_t tokens, int64_t in, WeightFormat format, float* packed,
                      int64_t tile_begin, int64_t tile_end);
  /// Computes the outputs of panels [panel_begin, panel_end) on the calling thread.
  void (*run)(const PanelProduct& product, int64_t panel_begin, int64_t panel_end);
};

const PanelKernels& panel_kernels_avx512_bf16();
const PanelKernels& panel_kernels_avx512();
const PanelKernels& panel_kernels_avx2();
const PanelKernels& panel_kernels_portable();

/// The variants this CPU can run, fastest first. avx512_bf16 leads where the CPU has it: it
/// differs from avx512 only for bf16 weights, whose inputs it rounds to bf16 (twice the FLOPs per
/// instruction, as bf16 inference in transformers and llama.cpp computes); avx512 keeps float32
/// arithmetic for them.
std::vector<const PanelKernels*> supported_panel_kernels();

/// The supported variant called `name`; an unknown or unsupported name is an InvalidArgument error
/// that names the supported ones (`what` says where the name came from).
const PanelKernels& panel_kernels_named(const std::string& name, const std::string& what);

/// The default variant: the one named by the IZWI_CPU_KERNELS environment variable (read once),
/// else the fastest this CPU runs.
const PanelKernels& active_panel_kernels();

}  // namespace izwi
