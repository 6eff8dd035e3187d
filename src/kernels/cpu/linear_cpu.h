#pragma once
// y[T, out] = x[T, in] * W[out, in]^T (+ bias) on the CPU, with W stored as float32 or bfloat16
// (converted inside the kernel, so bf16 weights cost half the memory traffic).
//
// Decode-sized batches (T <= kGemvMaxTokens) are memory-bound: each thread streams its share of
// W's rows once and dots every row with all T inputs. Larger batches are compute-bound and go
// through Eigen's GEMM, one block of rows per task (bf16 blocks converted into a scratch first).

#include <cstdint>

namespace izwi {

/// How a weight matrix's elements are stored. I8 and I4 (quantized, kernels/cpu/quant_kernels.h)
/// exist only packed, and only the quantized kernels take them.
enum class WeightFormat { F32, BF16, I8, I4 };

constexpr int64_t kGemvMaxTokens = 16;

/// `weight` points to out x in elements of `format`; bias may be null. Uses libtorch's thread pool.
void linear_cpu(const float* x, int64_t tokens, int64_t in, const void* weight, WeightFormat format, int64_t out,
                const float* bias, float* y);

}  // namespace izwi
