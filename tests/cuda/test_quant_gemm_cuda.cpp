// The FP8 cuBLASLt linear, both ways, against a host reference computed from the same quantized
// values (activations per token row, per-tensor and per-channel weight scales); and the engine's
// path to the quantized kernels, a Linear holding a quantized matrix on the Cuda backend. The int4
// GEMV kernel's own tests are in test_int4_gemv_cuda.cpp.
// Written with the kernels on 2026-11-29; the FP8 kernel-level test runs on the CPU through the CUDA
// emulator (tests/cuda_emu, its cuBLASLt held to the documented FP8 rules), none yet on a GPU.

#include <cublasLt.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "common/reference.h"
#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "izwi/engine.h"
#include "kernels/backend.h"
#include "kernels/cuda/fp8_gemm_cuda.h"
#include "kernels/cuda/fp8_quantize_cuda.h"
#include "kernels/ops/linear_op.h"
#include "layers/linear.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace izwi {
namespace {

using cuda_test::as_bf16;
using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::from_bf16_device;
using cuda_test::kBf16OutputTolerance;
using cuda_test::random_floats;
using cuda_test::round_bf16;
using cuda_test::to_bf16;

// The FP8 linear both ways (fp8_gemm_cuda.h) against a host product of the same e4m3 values:
// activations quantized per token row, weights per channel (`per_channel`) or one scale written
// out per row as the engine holds a per-tensor one, an optional bias. `offset` bytes into their
// buffers (16: aligned to 16 bytes, not to the 256 cuBLASLt assumes unless told) go the quantized
// activations, the weights and the float32 product.
void check_fp8(int64_t tokens, int64_t out, int64_t in, bool per_channel, bool with_bias, int64_t offset = 0) {
  SCOPED_TRACE(::testing::Message() << "tokens " << tokens << " out " << out << " in " << in
                                    << (per_channel ? " per-channel" : " per-tensor") << (with_bias ? " bias" : "")
                                    << " offset " << offset);
  const std::vector<float> weights = random_floats(out * in, 11, -0.2f, 0.2f);
  float largest = 0.0f;
  for (float w : weights) largest = std::max(largest, std::fabs(w));
  std::vector<float> w_scale(out, largest / 448.0f);
  if (per_channel) {
    for (int64_t o = 0; o < out; ++o) {
      float row = 0.0f;
      for (int64_t k = 0; k < in; ++k) row = std::max(row, std::fabs(weights[o * in + k]));
      w_scale[o] = row / 448.0f;
    }
  }
  std::vector<__nv_fp8_e4m3> w_q(offset + out * in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) w_q[offset + o * in + k] = __nv_fp8_e4m3(weights[o * in + k] / w_scale[o]);
  }
  std::vector<float> x = round_bf16(random_floats(tokens * in, 12, -3.0f, 3.0f));
  for (int64_t k = 0; k < in; ++k) x[k] *= 0.01f;  // a quiet row, whose own scale keeps its precision
  x = round_bf16(x);
  const std::vector<float> bias = round_bf16(random_floats(out, 13, -1.0f, 1.0f));

  std::vector<float> x_scale(tokens), expected(tokens * out);
  for (int64_t t = 0; t < tokens; ++t) {
    float amax = 0.0f;
    for (int64_t k = 0; k < in; ++k) amax = std::max(amax, std::fabs(x[t * in + k]));
    x_scale[t] = amax / 448.0f;
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0.0;
      for (int64_t k = 0; k < in; ++k) {
        sum += static_cast<double>(static_cast<float>(__nv_fp8_e4m3(x[t * in + k] / x_scale[t]))) *
               static_cast<float>(w_q[offset + o * in + k]);
      }
      expected[t * out + o] = static_cast<float>(sum * x_scale[t] * w_scale[o] + (with_bias ? bias[o] : 0.0f));
    }
  }

  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<uint16_t> x_bits = to_bf16(x), bias_bits = to_bf16(bias);
  DeviceBuffer<uint16_t> d_x(x_bits), d_bias(bias_bits);
  DeviceBuffer<__nv_fp8_e4m3> d_xq(offset + tokens * in), d_w(w_q);
  DeviceBuffer<float> d_x_scale(tokens), d_w_scale(w_scale), d_acc(offset / 4 + tokens * out);
  DeviceBuffer<uint8_t> lt_workspace(size_t{32} << 20);
  __nv_fp8_e4m3* xq = d_xq.get() + offset;
  quantize_fp8_rows_cuda(as_bf16(d_x.get()), tokens, in, xq, d_x_scale.get(), nullptr);
  EXPECT_EQ(d_x_scale.to_host(), x_scale);
  for (const bool scaled : {true, false}) {
    SCOPED_TRACE(scaled ? "one scaled GEMM" : "GEMM, then the scales");
    DeviceBuffer<uint16_t> d_y(tokens * out);
    Fp8LinearArgs args;
    args.x = xq;
    args.x_scales = d_x_scale.get();
    args.w = d_w.get() + offset;
    args.w_scales = d_w_scale.get();
    args.bias = with_bias ? as_bf16(d_bias.get()) : nullptr;
    args.y = as_bf16(d_y.get());
    args.tokens = tokens;
    args.out = out;
    args.in = in;
    args.lt_workspace = lt_workspace.get();
    args.lt_workspace_bytes = size_t{32} << 20;
    if (scaled) {
      const bool ran = fp8_scaled_gemm_cuda(handle, args, nullptr);
#if defined(IZWI_CUDA_EMULATOR) && CUBLAS_VERSION >= 120900
      EXPECT_TRUE(ran) << "the emulated cuBLASLt has the outer-vector scales";
#endif
      if (!ran) {
        std::printf("fp8_scaled_gemm_cuda: this cuBLASLt has no outer-vector FP8 algorithm (%lld x %lld x %lld)\n",
                    static_cast<long long>(tokens), static_cast<long long>(out), static_cast<long long>(in));
        continue;
      }
    } else {
      fp8_gemm_then_scale_cuda(handle, args, d_acc.get() + offset / 4, nullptr);
    }
    expect_close(from_bf16_device(d_y), expected, kBf16OutputTolerance);
  }
  cublasLtDestroy(handle);
}

TEST(Fp8LinearCuda, MatchesTheDequantizedProduct) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  int major = 0;
  cuda_test::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "compute capability");
  if (major < 9) GTEST_SKIP() << "FP8 GEMMs need Hopper (sm_90) or newer";
  check_fp8(1, 256, 512, true, true);
  check_fp8(128, 1024, 2048, true, false);
  check_fp8(37, 96, 64, false, true);
  check_fp8(5, 96, 64, true, true, 16);  // the alignments cuBLASLt is told must be the pointers'
}

// The engine's path (layers/linear.h, ops::linear_quantized): a Linear holding `m` on the Cuda
// backend in bf16 takes `expected` for `rows` token rows, and its output is the float product over
// the dequantized weights within `tolerance` of the output's largest magnitude (bf16 rounding; for
// FP8 also the activations' e4m3 rounding, 2^-4 relative per element).
void check_device_linear(const QuantizedMatrix& m, int64_t rows, ops::QuantizedProduct expected, double tolerance) {
  SCOPED_TRACE(::testing::Message() << "rows " << rows << " out " << m.out << " in " << m.in);
  BackendOptions options;
  options.device = "cuda";
  options.dtype = "bfloat16";
  const Backend backend(options);
  ASSERT_EQ(ops::quantized_product(ops::QuantizedKernelSupport::of(backend), m.kind, m.out, m.in, m.group_size, rows),
            expected);
  ASSERT_TRUE(ops::keeps_quantized(ops::QuantizedKernelSupport::of(backend), m));
  const at::Tensor x = at::randn({rows, m.in}).to(at::kBFloat16), bias = at::randn({m.out}).to(at::kBFloat16);
  const at::Tensor reference = at::linear(x.to(at::kFloat), dequantize(m), bias.to(at::kFloat));
  const Linear linear(m.to(backend.device()), bias.to(backend.device()));
  const at::Tensor y = linear(x.to(backend.device()), backend).to(at::kCPU, at::kFloat);
  EXPECT_LE((y - reference).abs().max().item<double>(), tolerance * reference.abs().max().item<double>());
}

TEST(QuantizedLinearCuda, Int4LayersTakeTheGemvForDecodeAndTheDequantizedGemmForPrefill) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  if (!at::hasCUDA()) GTEST_SKIP() << "libtorch without CUDA (the CUDA emulator runs the kernels alone)";
  at::manual_seed(3);
  QuantizedMatrix m = quantize_int4(at::randn({200, 512}), 64);
  m.zeros = at::randint(0, 16, {200, 512 / 64}, at::TensorOptions().dtype(at::kByte));
  for (const int64_t rows : {int64_t{1}, int64_t{5}, ops::kInt4GemvMaxRows}) {
    check_device_linear(m, rows, ops::QuantizedProduct::Int4Gemv, 1e-2);
  }
  check_device_linear(m, ops::kInt4GemvMaxRows + 8, ops::QuantizedProduct::Dequantized, 1e-2);
  m.column_order = at::randperm(512, at::TensorOptions().dtype(at::kLong));  // GPTQ act-order
  check_device_linear(m, 3, ops::QuantizedProduct::Int4Gemv, 1e-2);
}

TEST(QuantizedLinearCuda, Fp8LayersTakeCublasLtOnHopper) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  if (!at::hasCUDA()) GTEST_SKIP() << "libtorch without CUDA (the CUDA emulator runs the kernels alone)";
  int major = 0;
  cuda_test::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "compute capability");
  if (major < 9) GTEST_SKIP() << "FP8 GEMMs need Hopper (sm_90) or newer";
  at::manual_seed(4);
  const int64_t out = 96, in = 256;
  QuantizedMatrix m;
  m.kind = QuantKind::Fp8E4M3;
  m.out = out;
  m.in = in;
  m.group_size = in;
  // Any e4m3 byte but the NaNs (0x7f, 0xff): magnitudes 0..0x7e with a random sign.
  m.values = at::bitwise_or(at::randint(0, 0x7f, {out, in}, at::TensorOptions().dtype(at::kByte)),
                            at::randint(0, 2, {out, in}, at::TensorOptions().dtype(at::kByte)) * 128);
  m.scales = at::rand({out, 1}) * 1e-3 + 1e-4;
  for (const int64_t rows : {1, 64, 300}) check_device_linear(m, rows, ops::QuantizedProduct::Fp8Gemm, 0.1);
}

// The whole engine on the device with weight_dtype int4: the layers keep their int4 matrices on the
// GPU (fewer bytes held than bf16), a 40-token prompt takes the dequantized GEMM, one sequence's
// decode steps the GEMV (captured as CUDA graphs), 40 sequences' steps the dequantized GEMM again.
TEST(QuantizedLinearCuda, AnInt4EngineGeneratesOnTheDevice) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  if (!at::hasCUDA()) GTEST_SKIP() << "libtorch without CUDA (the CUDA emulator runs the kernels alone)";
  EngineConfig config;
  config.device = "cuda";
  config.dtype = "bfloat16";
  config.num_kv_blocks = 512;
  config.weight_dtype = "bfloat16";
  const std::string dir = testing::fixture_dir("llama-tiny");
  const int64_t bf16_bytes = Engine(dir, config).model_info().weight_bytes;
  config.weight_dtype = "int4";
  Engine engine(dir, config);
  EXPECT_LT(engine.model_info().weight_bytes, bf16_bytes * 6 / 10);
  Request request;
  for (int32_t i = 0; i < 40; ++i) request.prompt_ids.push_back(1 + i * 7 % 200);
  request.params.max_tokens = 12;
  request.params.ignore_eos = true;
  request.params.sampling.temperature = 0.0f;
  EXPECT_EQ(engine.generate(request).tokens.size(), 12u);
  request.params.n = 40;
  request.params.sampling.temperature = 1.0f;
  request.params.seed = 5;
  const Output many = engine.generate(request);
  ASSERT_EQ(many.choices.size(), 40u);
  for (const Output& choice : many.choices) EXPECT_EQ(choice.tokens.size(), 12u);
}

}  // namespace
}  // namespace izwi
