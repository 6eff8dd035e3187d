// Which product a quantized matrix kept on a device takes (ops::quantized_product: the CUDA int4
// GEMV, cuBLASLt FP8, or the dequantized GEMM), decided without a GPU; and the dequantized GEMM
// itself, the path every device falls back to, checked on the CPU against a float64 product.

#include <gtest/gtest.h>

#include "kernels/backend.h"
#include "kernels/ops/linear_op.h"
#include "layers/linear.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace izwi {
namespace {

using ops::QuantizedKernelSupport;
using ops::QuantizedProduct;

constexpr QuantizedKernelSupport kHopper{true, 90};
constexpr QuantizedKernelSupport kAmpere{true, 86};
constexpr QuantizedKernelSupport kNoDeviceKernels{false, 90};

TEST(QuantizedProduct, Int4DecodeRowsTakeTheGemv) {
  for (int64_t group : {32, 64}) {
    for (int64_t rows : {int64_t{1}, int64_t{8}, int64_t{9}, ops::kInt4GemvMaxRows}) {
      EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Int4, 256, 256, group, rows), QuantizedProduct::Int4Gemv)
          << group << " " << rows;
    }
    // A prefill's rows: one GEMM on the dequantized matrix reads less than many GEMV passes.
    EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Int4, 256, 256, group, ops::kInt4GemvMaxRows + 1),
              QuantizedProduct::Dequantized);
  }
  // The GEMV reads 32 columns a lane step: in and the group must be multiples of 32.
  EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Int4, 240, 240, 48, 1), QuantizedProduct::Dequantized);
  EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Int4, 80, 80, 80, 1), QuantizedProduct::Dequantized);
  // The GEMV takes any number of output rows.
  EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Int4, 200, 256, 32, 1), QuantizedProduct::Int4Gemv);
  EXPECT_EQ(ops::quantized_product(kNoDeviceKernels, QuantKind::Int4, 256, 256, 32, 1), QuantizedProduct::Dequantized);
}

TEST(QuantizedProduct, Fp8TakesCublasLtOnHopperOnly) {
  for (int64_t rows : {1, 128, 4096}) {
    EXPECT_EQ(ops::quantized_product(kHopper, QuantKind::Fp8E4M3, 256, 256, 256, rows), QuantizedProduct::Fp8Gemm);
  }
  EXPECT_EQ(ops::quantized_product(kAmpere, QuantKind::Fp8E4M3, 256, 256, 256, 1), QuantizedProduct::Dequantized);
  // cuBLASLt's FP8 GEMM wants out and in multiples of 16: either one off and no algorithm would
  // take the layer (the GEMM would fail on every call).
  EXPECT_EQ(ops::quantized_product(kHopper, QuantKind::Fp8E4M3, 256, 200, 200, 1), QuantizedProduct::Dequantized);
  EXPECT_EQ(ops::quantized_product(kHopper, QuantKind::Fp8E4M3, 200, 256, 256, 1), QuantizedProduct::Dequantized);
  EXPECT_EQ(ops::quantized_product(kHopper, QuantKind::Fp8E4M3, 100, 256, 256, 1), QuantizedProduct::Dequantized);
  EXPECT_EQ(ops::quantized_product(kNoDeviceKernels, QuantKind::Fp8E4M3, 256, 256, 256, 1),
            QuantizedProduct::Dequantized);
}

TEST(QuantizedProduct, OnlyMatricesWithADeviceKernelStayQuantized) {
  const at::Tensor w = at::randn({48, 128}, at::TensorOptions().dtype(at::kFloat));
  EXPECT_TRUE(ops::keeps_quantized(kAmpere, quantize_int4(w, 32)));
  // Int8 has no CUDA kernel (the Backend refuses weight_dtype int8 there); the CPU's are packed.
  EXPECT_FALSE(ops::keeps_quantized(kHopper, quantize_int8(w)));
  EXPECT_FALSE(ops::keeps_quantized(kNoDeviceKernels, quantize_int4(w, 32)));
  // The CPU backends have no device kernels: nothing stays quantized there through this path.
  EXPECT_FALSE(QuantizedKernelSupport::of(Backend::host()).cuda_bf16);
  EXPECT_FALSE(QuantizedKernelSupport::of(Backend::reference(at::kCPU, at::kBFloat16)).cuda_bf16);
}

// The dequantized GEMM, which any device runs: a Linear holding an int4 matrix with zero points
// and act-order columns against a float64 product over independently unpacked weights.
TEST(QuantizedProduct, DequantizedGemmEqualsTheFloatProduct) {
  const int64_t out = 24, in = 64, group = 32;
  at::manual_seed(7);
  QuantizedMatrix m = quantize_int4(at::randn({out, in}), group);
  m.zeros = at::randint(0, 16, {out, in / group}, at::TensorOptions().dtype(at::kByte));
  m.column_order = at::randperm(in, at::TensorOptions().dtype(at::kLong));
  // w[o, column_order[k]] = (nibble k of row o - zero) * scale, read here byte by byte.
  at::Tensor w = at::zeros({out, in}, at::kDouble);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) {
      const int byte = m.values[o][k / 2].item<int>();
      const int q = k % 2 == 0 ? byte & 15 : byte >> 4;
      const double scale = m.scales[o][k / group].item<double>(), zero = m.zeros[o][k / group].item<double>();
      w[o][m.column_order[k].item<int64_t>()] = (q - zero) * scale;
    }
  }
  const at::Tensor bias = at::randn({out});
  const at::Tensor x = at::randn({2, 3, in});  // leading dims kept
  const Linear linear(m, bias);
  const at::Tensor y = linear(x, Backend::reference(at::kCPU, at::kFloat));
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, out}));
  const at::Tensor expected = at::matmul(x.to(at::kDouble), w.t()) + bias.to(at::kDouble);
  EXPECT_LT((y.to(at::kDouble) - expected).abs().max().item<double>(), 1e-4);
  // Its bytes are the quantized matrix's: values, scales, zero points and the column order.
  EXPECT_EQ(linear.weight_bytes(), out * in / 2 + out * (in / group) * 5 + in * 8);
}

}  // namespace
}  // namespace izwi
