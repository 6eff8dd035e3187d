#pragma once
// Activations to FP8 (e4m3) for the FP8 linear layers (fp8_gemm_cuda.h): one scale for the whole
// tensor, dynamic (from max |x|) or given. Runs on the CPU through the CUDA emulator
// (tests/cuda_emu); never run on a GPU yet (docs/quantization.md).

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace izwi {

/// x (bf16, n elements) -> e4m3 with one scale for the whole tensor: *scale = max |x| / 448 over
/// the finite values (the dynamic activation scheme), at least 1 / (448 * 512), and 1 when no value
/// is finite and nonzero; out = e4m3(x / *scale) rounded to nearest, saturated at +-448 (an inf
/// saturates, a NaN stays NaN). `scale` is a device float; `amax_scratch` a device float the call zeroes.
void quantize_fp8_dynamic_cuda(const __nv_bfloat16* x, int64_t n, __nv_fp8_e4m3* out, float* scale, float* amax_scratch,
                               cudaStream_t stream);
/// The same with a given device scale (the static scheme's input_scale).
void quantize_fp8_static_cuda(const __nv_bfloat16* x, int64_t n, const float* scale, __nv_fp8_e4m3* out,
                              cudaStream_t stream);

}  // namespace izwi
