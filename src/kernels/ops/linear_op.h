#pragma once
// The linear-layer dispatch point for weights kept row-major ([out, in], as Hugging Face stores
// them): the codecs, the depthformer and any Linear not packed at load; and for quantized matrices
// kept on a device (int4, FP8). Packed weights have their own product (layers/packed_weight.h).

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/backend.h"
#include "quant/quantized_matrix.h"

namespace izwi::ops {

/// y = x W^T + b over the last dim of x (any leading dims). Cpu: linear_cpu for float32 x and
/// contiguous float32 or bf16 W (every intra-op thread, whatever BLAS's own thread count); all
/// other cases at::linear (cuBLAS on CUDA) with W converted to x's dtype.
at::Tensor linear(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

/// The product a quantized matrix held on a device takes.
enum class QuantizedProduct {
  Dequantized,  ///< the matrix dequantized (quant/dequantize.h) to x's dtype, then at::linear
  Int4Gemv,     ///< int4_linear_cuda (kernels/cuda/int4_gemv_cuda.h)
  Fp8Gemm,      ///< x quantized to e4m3 per token row, then cuBLASLt's FP8 GEMM (fp8_gemm_cuda.h)
};

/// Most token rows the int4 GEMV takes: it reads the weights once per kInt4GemvMaxTokens (8) rows,
/// so up to 4 passes still read fewer bytes than dequantizing the matrix for a GEMM; more rows (a
/// prefill) take the dequantized GEMM. Not yet measured on a GPU.
constexpr int64_t kInt4GemvMaxRows = 32;

/// What the device kernels take, from the backend: izwi's CUDA kernels running in bf16, and the
/// device's compute capability (major * 10 + minor; FP8 needs 90, Hopper).
struct QuantizedKernelSupport {
  bool cuda_bf16 = false;
  int32_t sm_version = 0;
  static QuantizedKernelSupport of(const Backend& backend);
};

/// The product for `rows` token rows of a quantized matrix (kind, out, in, group_size) on a
/// backend with `support`: Int4Gemv for int4 with in and group_size multiples of 32 and rows <=
/// kInt4GemvMaxRows; Fp8Gemm for FP8 on sm_90+ with out and in multiples of 16 (cuBLASLt's FP8
/// dimension rule, which torch._scaled_mm enforces the same way); otherwise Dequantized.
QuantizedProduct quantized_product(const QuantizedKernelSupport& support, QuantKind kind, int64_t out, int64_t in,
                                   int64_t group_size, int64_t rows);

/// True when a quantized matrix is worth keeping quantized on the backend's device: some row count
/// takes a quantized kernel (int4 decode, FP8 on Hopper). Otherwise a layer dequantizes it once at load.
bool keeps_quantized(const QuantizedKernelSupport& support, const QuantizedMatrix& w);

/// y = x W^T + b for a quantized W on x's device (its tensors there), with the product
/// quantized_product() picks. bias [out] in x's dtype or undefined.
at::Tensor linear_quantized(const Backend& backend, const at::Tensor& x, const QuantizedMatrix& w,
                            const at::Tensor& bias);

}  // namespace izwi::ops
