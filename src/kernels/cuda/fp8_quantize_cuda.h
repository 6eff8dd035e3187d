#pragma once
// Activations to FP8 (e4m3) for the FP8 linear layers (fp8_gemm_cuda.h): one scale per token row,
// from the row alone. Runs on the CPU through the CUDA emulator (tests/cuda_emu); never run on a
// GPU yet (docs/quantization.md).

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// x [tokens, in] (bf16, rows contiguous) -> out [tokens, in] e4m3 and scales [tokens] (float32):
/// scales[t] = max |x[t, :]| / 448 over the row's finite values, at least 1 / (448 * 512), and 1
/// for a row with no finite nonzero value; out[t, k] = e4m3(x[t, k] / scales[t]) rounded to nearest
/// even, saturated at +-448 (an inf saturates, a NaN stays NaN). A row's bytes and scale depend on
/// that row alone: a request's quantized activations do not change with what else is in the batch.
void quantize_fp8_rows_cuda(const __nv_bfloat16* x, int64_t tokens, int64_t in, __nv_fp8_e4m3* out, float* scales,
                            cudaStream_t stream);

}  // namespace izwi
