#include "kernels/backend.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/check.h"
#include "common/logging.h"
#include "izwi/config.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/panel_kernels.h"
#if IZWI_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace izwi {

namespace {

// The largest decode batch captured as a CUDA graph; bigger steps gain little from one.
constexpr int32_t kMaxGraphBatch = 256;

/// "cpu", "cuda", "cuda:N" or "mps", checked against what this libtorch build supports.
at::Device parse_device(const std::string& name) {
  at::Device device = at::kCPU;
  try {
    device = at::Device(name);
  } catch (const std::exception&) {
    fail(ErrorCode::InvalidArgument, "EngineConfig.device '{}' is not one of cpu, cuda, cuda:N, mps", name);
  }
  if (device.is_cuda() && !at::hasCUDA()) {
    fail(ErrorCode::Unsupported,
         "EngineConfig.device '{}': this libtorch build has no CUDA support or no GPU is visible", name);
  }
  if (device.is_mps() && !at::hasMPS()) {
    fail(ErrorCode::Unsupported, "EngineConfig.device '{}': this libtorch build has no MPS support", name);
  }
  if (!device.is_cpu() && !device.is_cuda() && !device.is_mps()) {
    fail(ErrorCode::Unsupported, "EngineConfig.device '{}' is not supported (cpu, cuda, mps)", name);
  }
  return device;
}

/// OMP_NUM_THREADS, as OpenMP programs read it, when it holds a sensible count; else every core.
int default_num_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int64_t mem_available(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::Internal, "cannot read {} for the free memory", path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    int64_t kib = -1;
    if (fields >> key >> kib >> unit && key == "MemAvailable:" && unit == "kB" && kib >= 0) return kib * 1024;
  }
  fail(ErrorCode::Internal, "{} has no 'MemAvailable: N kB' line", path);
}

#if IZWI_WITH_CUDA
void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

// index -1: the current device, as libtorch takes "cuda" without one.
int64_t cuda_free_bytes(int index) {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(index < 0 ? previous : index), "cudaSetDevice");
  size_t free = 0, total = 0;
  const cudaError_t status = cudaMemGetInfo(&free, &total);
  check(cudaSetDevice(previous), "cudaSetDevice");
  check(status, "cudaMemGetInfo");
  return static_cast<int64_t>(free);
}

// index -1: the current device.
int32_t cuda_device_attribute(cudaDeviceAttr attribute, int index) {
  int device = index;
  if (device < 0) check(cudaGetDevice(&device), "cudaGetDevice");
  int value = 0;
  check(cudaDeviceGetAttribute(&value, attribute, device), "cudaDeviceGetAttribute");
  return value;
}
#endif

}  // namespace

at::ScalarType parse_dtype(const std::string& name, const std::string& field) {
  if (name == "float32" || name == "f32") return at::kFloat;
  if (name == "bfloat16" || name == "bf16") return at::kBFloat16;
  if (name == "float16" || name == "f16") return at::kHalf;
  fail(ErrorCode::InvalidArgument, "{} '{}' is not one of float32, bfloat16, float16", field, name);
}

BackendOptions BackendOptions::from_config(const EngineConfig& config) {
  BackendOptions options;
  options.device = config.device;
  options.dtype = config.dtype;
  options.weight_dtype = config.weight_dtype;
  options.kv_cache_dtype = config.kv_cache_dtype;
  options.fast_kernels = config.use_fast_kernels;
  options.cpu_kernels = config.cpu_kernels;
  options.threads = config.num_threads;
  options.max_graph_batch = config.use_cuda_graphs ? std::min(config.max_batch_size, kMaxGraphBatch) : 0;
  return options;
}

Backend::Backend(const at::Device& device, at::ScalarType dtype, Kernels kernels, const PanelKernels* panel_kernels)
    : device_(device),
      dtype_(dtype),
      weight_dtype_(dtype),
      kv_dtype_(dtype),
      kernels_(kernels),
      panel_kernels_(kernels == Kernels::Cpu && dtype == at::kFloat ? panel_kernels : nullptr) {}

Backend::Backend(const BackendOptions& options) {
  device_ = parse_device(options.device);
  dtype_ = parse_dtype(options.dtype, "EngineConfig.dtype");
  weight_quantization_ = WeightQuantization::parse(options.weight_dtype, "EngineConfig.weight_dtype");
  weight_dtype_ = options.weight_dtype == "auto" ? dtype_
                  : weight_quantization_.enabled ? at::kBFloat16
                                                 : parse_dtype(options.weight_dtype, "EngineConfig.weight_dtype");
  kv_dtype_ =
      options.kv_cache_dtype == "auto" ? dtype_ : parse_dtype(options.kv_cache_dtype, "EngineConfig.kv_cache_dtype");
  if (options.fast_kernels && device_.is_cpu()) kernels_ = Kernels::Cpu;
#if IZWI_WITH_CUDA
  if (options.fast_kernels && device_.is_cuda()) kernels_ = Kernels::Cuda;
#endif
  // libtorch's intra-op pool is process-wide; it defaults to one thread in Debian's build.
  at::set_num_threads(options.threads > 0 ? options.threads : default_num_threads());
  if (cpu_kernels()) {
    if (run_blas_on_calling_thread()) logger()->debug("OpenBLAS set to run on the calling thread");
    const PanelKernels& variant = options.cpu_kernels == "auto"
                                      ? active_panel_kernels()
                                      : panel_kernels_named(options.cpu_kernels, "EngineConfig.cpu_kernels");
    // Linear weights are packed only for float32 compute; bf16 and f16 run libtorch's products.
    if (dtype_ == at::kFloat) panel_kernels_ = &variant;
  }
  keeps_bf16_weights_ = options.weight_dtype == "auto" && panel_kernels_ != nullptr;
  if (cuda_kernels()) {
    max_graph_batch_ = std::max(0, options.max_graph_batch);
#if IZWI_WITH_CUDA
    const int index = device_.has_index() ? device_.index() : -1;
    cuda_sm_version_ = cuda_device_attribute(cudaDevAttrComputeCapabilityMajor, index) * 10 +
                       cuda_device_attribute(cudaDevAttrComputeCapabilityMinor, index);
    cuda_multiprocessors_ = cuda_device_attribute(cudaDevAttrMultiProcessorCount, index);
#endif
  }
  // Where the quantized kernels are: the CPU's take int8 and int4 in float32; on CUDA the int4
  // GEMV takes bf16 activations (layers/linear.h), and int8 has no CUDA kernel.
  const bool int4_on_cuda = cuda_kernels() && dtype_ == at::kBFloat16 && weight_quantization_.kind == QuantKind::Int4;
  if (weight_quantization_.enabled && panel_kernels_ == nullptr && !int4_on_cuda) {
    fail(ErrorCode::Unsupported,
         "EngineConfig.weight_dtype '{}': int8 and int4 weights run on izwi's CPU kernels (device cpu, dtype "
         "float32, use_fast_kernels on); on CUDA (a CUDA build, use_fast_kernels on) int4 runs with dtype "
         "bfloat16 and int8 is not supported",
         options.weight_dtype);
  }
}

const Backend& Backend::host() {
  static const Backend backend(at::kCPU, at::kFloat, Kernels::Cpu, &active_panel_kernels());
  return backend;
}

Backend Backend::host(const PanelKernels& kernels) { return Backend(at::kCPU, at::kFloat, Kernels::Cpu, &kernels); }

Backend Backend::reference(const at::Device& device, at::ScalarType dtype) {
  return Backend(device, dtype, Kernels::Torch, nullptr);
}

const char* Backend::kernels_name() const {
  switch (kernels_) {
    case Kernels::Torch:
      return "torch";
    case Kernels::Cpu:
      return "cpu";
    case Kernels::Cuda:
      return "cuda";
  }
  return "unknown";
}

int64_t Backend::available_memory_bytes(const std::string& meminfo_path) const {
  if (device_.is_cpu()) return mem_available(meminfo_path);
#if IZWI_WITH_CUDA
  if (device_.is_cuda()) return cuda_free_bytes(device_.has_index() ? device_.index() : -1);
#endif
  fail(ErrorCode::Unsupported,
       "EngineConfig.kv_cache_memory_fraction: the free memory of device '{}' is unknown; "
       "set num_kv_blocks instead",
       device_.str());
}

}  // namespace izwi
