#pragma once
// FP8 (e4m3) linear layers on Hopper through cuBLASLt: y [tokens, out] = x W^T with both operands
// float8_e4m3fn, W as FP8 checkpoints store it (quant/fp8_reader.h, one scale per output row) and
// x quantized per token row (fp8_quantize_cuda.h). Two ways, the first where cuBLASLt has it:
// - fp8_scaled_gemm_cuda: one GEMM that applies both scale vectors (cuBLASLt's outer-vector scale
//   mode, cuBLAS 12.9+) and the bias, writing bf16;
// - fp8_gemm_then_scale_cuda: a float32 GEMM of the bytes, then one kernel applying the scales and
//   the bias.
// Both are cuBLASLt's FP8 GEMM in the "TN" form it requires: w [out, in] row-major is the
// transposed A, x [tokens, in] row-major is B, and D [out, tokens] column-major is y row-major.
// All pointers are device pointers, 16-byte aligned (the heuristic is told their real alignment);
// `out` and `in` multiples of 16 (cuBLASLt's FP8 dimension rule). `lt_workspace` (may be null with
// 0 bytes) is cuBLASLt's own scratch.
// Run on the CPU through the CUDA emulator against an emulated cuBLASLt (tests/cuda_emu); never
// run on a GPU yet (docs/quantization.md).

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace izwi {

/// The operands of y[t, o] = x_scales[t] * w_scales[o] * sum_k e4m3(x[t, k]) e4m3(w[o, k]) + bias[o],
/// rounded once to bf16; bias may be null.
struct Fp8LinearArgs {
  const __nv_fp8_e4m3* x = nullptr;  ///< [tokens, in]
  const float* x_scales = nullptr;   ///< [tokens]
  const __nv_fp8_e4m3* w = nullptr;  ///< [out, in]
  const float* w_scales = nullptr;   ///< [out]
  const __nv_bfloat16* bias = nullptr;
  __nv_bfloat16* y = nullptr;  ///< [tokens, out]
  int64_t tokens = 0, out = 0, in = 0;
  void* lt_workspace = nullptr;
  size_t lt_workspace_bytes = 0;
};

/// The whole product in one cuBLASLt call, where this cuBLASLt (12.9+) and device have an algorithm
/// for it; false (nothing launched) where not.
bool fp8_scaled_gemm_cuda(cublasLtHandle_t handle, const Fp8LinearArgs& args, cudaStream_t stream);

/// The product as a float32 GEMM into `workspace` (tokens * out floats), then one kernel for the
/// scales and bias. Throws where cuBLASLt has no FP8 algorithm (before Hopper).
void fp8_gemm_then_scale_cuda(cublasLtHandle_t handle, const Fp8LinearArgs& args, float* workspace,
                              cudaStream_t stream);

}  // namespace izwi
