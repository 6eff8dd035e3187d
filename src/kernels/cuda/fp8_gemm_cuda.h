#pragma once
// FP8 (e4m3) linear layers on Hopper through cuBLASLt: y [tokens, out] = x W^T with both operands
// float8_e4m3fn, as FP8 checkpoints store W (quant/fp8_reader.h) and x quantized per step
// (fp8_quantize_cuda.h).
// Compile-checked only (scripts/cuda_kernels_compile.sh): never run on a GPU yet (docs/quantization.md).

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace izwi {

/// Bytes of the float32 product fp8_linear_cuda stages before scaling it per output channel.
inline size_t fp8_linear_workspace_bytes(int64_t tokens, int64_t out) {
  return static_cast<size_t>(tokens) * static_cast<size_t>(out) * sizeof(float);
}

/// y[t, o] = x_scale * w_scale[o or 0] * sum_k e4m3(x[t, k]) e4m3(w[o, k]) (+ bias[o]), rounded once
/// to bf16. cuBLASLt's FP8 GEMM (TN: w [out, in] row-major is the transposed A) computes the sum
/// in float32 with x_scale applied, into `workspace` (fp8_linear_workspace_bytes); a second kernel
/// applies the per-tensor (w_scale_per_channel false) or per-channel weight scale and the bias.
/// All pointers are device pointers, 16-byte aligned; `out` and `in` multiples of 16 (cuBLASLt's
/// FP8 rule).
/// `lt_workspace` (may be null with 0 bytes) is cuBLASLt's own scratch.
void fp8_linear_cuda(cublasLtHandle_t handle, const __nv_fp8_e4m3* x, const float* x_scale, const __nv_fp8_e4m3* w,
                     const float* w_scale, bool w_scale_per_channel, const __nv_bfloat16* bias, __nv_bfloat16* y,
                     int64_t tokens, int64_t out, int64_t in, float* workspace, void* lt_workspace,
                     size_t lt_workspace_bytes, cudaStream_t stream);

}  // namespace izwi
