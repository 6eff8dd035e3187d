// Backend: the one place EngineConfig's device and dtypes are parsed, and what each part of a
// forward pass asks about the kernels that run, the weights' layout and the memory left.

#include "kernels/backend.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "izwi/config.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {
namespace {

// fn throws izwi::Error with `code` and a message naming `part`.
void expect_error(const std::function<void()>& fn, ErrorCode code, const std::string& part) {
  EXPECT_EQ(testing::error_code_of(fn), code);
  EXPECT_NE(testing::error_message(fn).find(part), std::string::npos) << testing::error_message(fn);
}

// Options that leave libtorch's thread count (process-wide) as the test binary has it.
BackendOptions cpu_options() {
  BackendOptions options;
  options.threads = at::get_num_threads();
  return options;
}

TEST(Backend, BadOptionsAreErrorsNamingTheEngineConfigField) {
  const auto with = [](const std::function<void(BackendOptions&)>& change) {
    return [change] {
      BackendOptions options = cpu_options();
      change(options);
      Backend backend(options);
    };
  };
  expect_error(with([](BackendOptions& o) { o.device = "tpu"; }), ErrorCode::InvalidArgument,
               "EngineConfig.device 'tpu' is not one of cpu, cuda");
  expect_error(with([](BackendOptions& o) { o.dtype = "float8"; }), ErrorCode::InvalidArgument,
               "EngineConfig.dtype 'float8'");
  expect_error(with([](BackendOptions& o) { o.weight_dtype = "int3"; }), ErrorCode::InvalidArgument,
               "EngineConfig.weight_dtype 'int3'");
  expect_error(with([](BackendOptions& o) { o.weight_dtype = "int4:48"; }), ErrorCode::InvalidArgument,
               "EngineConfig.weight_dtype 'int4:48'");
  // Quantized weights have CPU kernels only, which run in float32.
  expect_error(with([](BackendOptions& o) {
                 o.weight_dtype = "int8";
                 o.dtype = "bfloat16";
               }),
               ErrorCode::Unsupported, "EngineConfig.weight_dtype 'int8'");
  // int4 in bf16 runs on CUDA's GEMV only, not on the CPU.
  expect_error(with([](BackendOptions& o) {
                 o.weight_dtype = "int4";
                 o.dtype = "bfloat16";
               }),
               ErrorCode::Unsupported, "on CUDA (a CUDA build, use_fast_kernels on) int4 runs with dtype bfloat16");
  expect_error(with([](BackendOptions& o) { o.kv_cache_dtype = "int8"; }), ErrorCode::InvalidArgument,
               "EngineConfig.kv_cache_dtype 'int8'");
  expect_error(with([](BackendOptions& o) { o.cpu_kernels = "sse9"; }), ErrorCode::InvalidArgument,
               "EngineConfig.cpu_kernels");
  if (!at::hasCUDA()) {
    expect_error(with([](BackendOptions& o) { o.device = "cuda"; }), ErrorCode::Unsupported, "EngineConfig.device");
  }
}

TEST(Backend, ParsesQuantizedWeightDtypes) {
  BackendOptions options = cpu_options();
  options.weight_dtype = "int8";
  const Backend int8(options);
  EXPECT_TRUE(int8.weight_quantization().enabled);
  EXPECT_EQ(int8.weight_quantization().kind, QuantKind::Int8);
  // What stays floating point (embedding tables) is stored in 16 bits.
  EXPECT_EQ(int8.weight_dtype(), at::kBFloat16);
  options.weight_dtype = "int4";
  EXPECT_EQ(Backend(options).weight_quantization().group_size, 32);
  options.weight_dtype = "int4:64";
  const Backend int4(options);
  EXPECT_EQ(int4.weight_quantization().kind, QuantKind::Int4);
  EXPECT_EQ(int4.weight_quantization().group_size, 64);
  options.weight_dtype = "bfloat16";
  EXPECT_FALSE(Backend(options).weight_quantization().enabled);
}

TEST(Backend, ParsesTheDeviceAndDtypesOnce) {
  BackendOptions options = cpu_options();
  options.weight_dtype = "bfloat16";
  options.kv_cache_dtype = "bf16";
  const Backend backend(options);
  EXPECT_TRUE(backend.device().is_cpu());
  EXPECT_EQ(backend.dtype(), at::kFloat);
  EXPECT_EQ(backend.weight_dtype(), at::kBFloat16);
  EXPECT_EQ(backend.kv_dtype(), at::kBFloat16);
  EXPECT_EQ(backend.options().dtype(), at::kFloat);

  options.dtype = "float16";
  options.weight_dtype = options.kv_cache_dtype = "auto";
  const Backend half(options);
  EXPECT_EQ(half.weight_dtype(), at::kHalf) << "auto follows dtype";
  EXPECT_EQ(half.kv_dtype(), at::kHalf);
}

TEST(Backend, TheHostRunsIzwisCpuKernelsInFloat32) {
  const Backend& host = Backend::host();
  EXPECT_TRUE(host.device().is_cpu());
  EXPECT_EQ(host.dtype(), at::kFloat);
  EXPECT_EQ(host.weight_dtype(), at::kFloat);
  EXPECT_TRUE(host.cpu_kernels());
  EXPECT_FALSE(host.cuda_kernels());
  EXPECT_EQ(host.panel_kernels(), &active_panel_kernels());
  EXPECT_STREQ(host.kernels_name(), "cpu");
  EXPECT_EQ(host.max_graph_batch(), 0);
  EXPECT_EQ(&Backend::host(), &host) << "one host backend per process";
}

TEST(Backend, WithoutFastKernelsLibtorchRunsTheOps) {
  BackendOptions options = cpu_options();
  options.fast_kernels = false;
  const Backend torch(options);
  EXPECT_FALSE(torch.cpu_kernels());
  EXPECT_FALSE(torch.cuda_kernels());
  EXPECT_EQ(torch.panel_kernels(), nullptr) << "no packed weights for libtorch's products";
  EXPECT_STREQ(torch.kernels_name(), "torch");

  const Backend reference = Backend::reference(at::kCPU, at::kBFloat16);
  EXPECT_FALSE(reference.cpu_kernels());
  EXPECT_EQ(reference.dtype(), at::kBFloat16);
  EXPECT_EQ(reference.kv_dtype(), at::kBFloat16);
  EXPECT_STREQ(reference.kernels_name(), "torch");
}

TEST(Backend, ThePanelKernelsAreChosenOnlyForFloat32OnTheCpu) {
  BackendOptions options = cpu_options();
  options.cpu_kernels = "portable";
  EXPECT_EQ(Backend(options).panel_kernels(), &panel_kernels_named("portable", "test"));
  options.dtype = "bfloat16";
  const Backend bf16(options);
  EXPECT_TRUE(bf16.cpu_kernels());
  EXPECT_EQ(bf16.panel_kernels(), nullptr) << "bf16 compute runs libtorch's products";
  EXPECT_EQ(Backend::reference(at::Device(at::kCUDA), at::kFloat).panel_kernels(), nullptr);
  EXPECT_EQ(Backend::reference(at::Device(at::kMPS), at::kFloat).panel_kernels(), nullptr);
}

TEST(Backend, GraphsNeedTheCudaKernels) {
  EngineConfig config;
  config.max_batch_size = 500;
  EXPECT_EQ(BackendOptions::from_config(config).max_graph_batch, 256) << "capped at 256";
  config.max_batch_size = 12;
  EXPECT_EQ(BackendOptions::from_config(config).max_graph_batch, 12);
  config.use_cuda_graphs = false;
  EXPECT_EQ(BackendOptions::from_config(config).max_graph_batch, 0);

  BackendOptions options = cpu_options();
  options.max_graph_batch = 64;
  EXPECT_EQ(Backend(options).max_graph_batch(), 0) << "no CUDA graphs on the CPU";
}

TEST(Backend, FromConfigCopiesTheExecutionFields) {
  EngineConfig config;
  config.device = "cuda:1";
  config.dtype = "bfloat16";
  config.weight_dtype = "float32";
  config.kv_cache_dtype = "bfloat16";
  config.use_fast_kernels = false;
  config.cpu_kernels = "avx2";
  config.num_threads = 3;
  const BackendOptions options = BackendOptions::from_config(config);
  EXPECT_EQ(options.device, "cuda:1");
  EXPECT_EQ(options.dtype, "bfloat16");
  EXPECT_EQ(options.weight_dtype, "float32");
  EXPECT_EQ(options.kv_cache_dtype, "bfloat16");
  EXPECT_FALSE(options.fast_kernels);
  EXPECT_EQ(options.cpu_kernels, "avx2");
  EXPECT_EQ(options.threads, 3);
}

TEST(Backend, TheCpuReadsMemAvailable) {
  const testing::TempDir dir;
  const std::string meminfo = dir.write("meminfo",
                                        "MemTotal:       24576000 kB\n"
                                        "MemFree:         1000000 kB\n"
                                        "MemAvailable:   20000000 kB\n"
                                        "Buffers:           12345 kB\n");
  EXPECT_EQ(Backend::host().available_memory_bytes(meminfo), int64_t{20000000} * 1024);
  EXPECT_GT(Backend::host().available_memory_bytes(), 0) << "this machine's /proc/meminfo";
}

TEST(Backend, AnUnreadableFigureIsAnErrorNamingTheFile) {
  const testing::TempDir dir;
  const std::string meminfo = dir.write("meminfo", "MemTotal:       24576000 kB\nMemAvailable: lots\n");
  const Backend& host = Backend::host();
  expect_error([&] { host.available_memory_bytes(meminfo); }, ErrorCode::Internal, meminfo);
  expect_error([&] { host.available_memory_bytes(meminfo); }, ErrorCode::Internal, "MemAvailable");
  expect_error([&] { host.available_memory_bytes(dir.file("missing")); }, ErrorCode::Internal, dir.file("missing"));
}

TEST(Backend, AnUnknownDevicesFreeMemoryIsUnsupported) {
  const Backend mps = Backend::reference(at::Device(at::kMPS), at::kFloat);
  expect_error([&] { mps.available_memory_bytes(); }, ErrorCode::Unsupported, "num_kv_blocks");
}

}  // namespace
}  // namespace izwi
