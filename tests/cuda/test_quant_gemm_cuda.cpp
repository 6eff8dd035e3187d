// The FP8 cuBLASLt linear against a host reference computed from the same quantized values
// (dynamic activation quantization, per-tensor and per-channel weight scales); and the engine's
// path to the quantized kernels, a Linear holding a quantized matrix on the Cuda backend. The int4
// GEMV kernel's own tests are in test_int4_gemv_cuda.cpp.
// Written with the kernels on 2026-11-29; the FP8 kernel-level test runs on the CPU through the CUDA
// emulator (tests/cuda_emu, its cuBLASLt held to the documented FP8 rules), none yet on a GPU.

#include <cublasLt.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
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

// `offset` bytes into their buffers (16: aligned to 16 bytes but not to the 256 cuBLASLt assumes by
// default) go the quantized activations, the weights and the float32 product.
void check_fp8(int64_t tokens, int64_t out, int64_t in, bool per_channel, int64_t offset = 0) {
  SCOPED_TRACE(::testing::Message() << "tokens " << tokens << " out " << out << " in " << in
                                    << (per_channel ? " per-channel" : " per-tensor") << " offset " << offset);
  const std::vector<float> weights = random_floats(out * in, 11, -0.2f, 0.2f);
  std::vector<float> w_scale(per_channel ? out : 1, 0.0f);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) {
      float& s = w_scale[per_channel ? o : 0];
      s = std::max(s, std::fabs(weights[o * in + k]) / 448.0f);
    }
  }
  std::vector<__nv_fp8_e4m3> w_q(offset + out * in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k)
      w_q[offset + o * in + k] = __nv_fp8_e4m3(weights[o * in + k] / w_scale[per_channel ? o : 0]);
  }
  const std::vector<float> x = round_bf16(random_floats(tokens * in, 12, -3.0f, 3.0f));
  const float x_amax =
      std::fabs(*std::max_element(x.begin(), x.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }));
  const float x_scale = x_amax / 448.0f, inverse = 1.0f / x_scale;

  std::vector<float> expected(tokens * out);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0.0;
      for (int64_t k = 0; k < in; ++k) {
        sum += static_cast<double>(static_cast<float>(__nv_fp8_e4m3(x[t * in + k] * inverse))) *
               static_cast<float>(w_q[offset + o * in + k]);
      }
      expected[t * out + o] = static_cast<float>(sum * x_scale * w_scale[per_channel ? o : 0]);
    }
  }

  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<uint16_t> x_bits = to_bf16(x);
  DeviceBuffer<uint16_t> d_x(x_bits), d_y(tokens * out);
  DeviceBuffer<__nv_fp8_e4m3> d_xq(offset + tokens * in), d_w(w_q);
  DeviceBuffer<float> d_x_scale(1), d_amax(1), d_w_scale(w_scale), d_acc(offset / 4 + tokens * out);
  DeviceBuffer<uint8_t> lt_workspace(size_t{32} << 20);
  __nv_fp8_e4m3* xq = d_xq.get() + offset;
  quantize_fp8_dynamic_cuda(as_bf16(d_x.get()), tokens * in, xq, d_x_scale.get(), d_amax.get(), nullptr);
  EXPECT_EQ(d_x_scale.to_host()[0], x_scale);
  fp8_linear_cuda(handle, xq, d_x_scale.get(), d_w.get() + offset, d_w_scale.get(), per_channel, nullptr,
                  as_bf16(d_y.get()), tokens, out, in, d_acc.get() + offset / 4, lt_workspace.get(), size_t{32} << 20,
                  nullptr);
  expect_close(from_bf16_device(d_y), expected, kBf16OutputTolerance);
  cublasLtDestroy(handle);
}

TEST(Fp8LinearCuda, MatchesTheDequantizedProduct) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  int major = 0;
  cuda_test::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "compute capability");
  if (major < 9) GTEST_SKIP() << "FP8 GEMMs need Hopper (sm_90) or newer";
  check_fp8(1, 256, 512, true);
  check_fp8(128, 1024, 2048, true);
  check_fp8(37, 96, 64, false);
  check_fp8(5, 96, 64, true, 16);  // the alignments cuBLASLt is told must be the pointers'
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
