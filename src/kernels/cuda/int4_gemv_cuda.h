#pragma once
// Int4 weight-only linear layers for small batches (decode) on the GPU: the weights stay packed as
// QuantizedMatrix holds them (GPTQ / AWQ checkpoints and quantize-at-load, quant/quantized_matrix.h),
// each read once per step for all the batch's rows; activations stay bf16, sums float32.
// Runs on the CPU through the CUDA emulator (tests/cuda_emu); never run on a GPU yet (docs/quantization.md).

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace izwi {

/// Most token rows one launch multiplies (a decode batch slice); larger batches go in slices.
constexpr int64_t kInt4GemvMaxTokens = 8;

/// The weights in QuantizedMatrix's int4 form, as device pointers.
struct Int4Weights {
  const uint8_t* values = nullptr;  ///< [out, in / 2]: column 2j low nibble, 2j + 1 high nibble
  const float* scales = nullptr;    ///< [out, in / group_size]
  const uint8_t* zeros = nullptr;   ///< [out, in / group_size], 0-15; null = 8 everywhere
  /// int64 [in] or null: packed column k multiplies input column column_order[k] (GPTQ act-order).
  const int64_t* column_order = nullptr;
  int64_t out = 0;
  int64_t in = 0;
  int64_t group_size = 0;
};

/// Bytes of float32 scratch int4_linear_cuda needs for `tokens` rows: the inputs gathered into the
/// packed column order when w.column_order is set, else 0.
size_t int4_linear_workspace_bytes(const Int4Weights& w, int64_t tokens);

/// y [tokens, out] = x [tokens, in] W^T (+ bias [out]), W[o, k] = (q - zero) * scale: one warp per
/// output row, each lane reading 16 bytes (32 weights) of the row at a time for every token row;
/// float32 sums rounded once to bf16. in and group_size must be multiples of 32; values 16-byte
/// aligned. Any number of tokens (slices of kInt4GemvMaxTokens); meant for few.
void int4_linear_cuda(const __nv_bfloat16* x, const Int4Weights& w, const __nv_bfloat16* bias, __nv_bfloat16* y,
                      int64_t tokens, float* workspace, cudaStream_t stream);

}  // namespace izwi
