#pragma once
// The backend a model runs on: its device, its dtypes, and which implementation of each op runs
// there. Built once per engine from EngineConfig (the only place the device and dtype strings are
// parsed); the executor, weight loading, the sampler and every op in kernels/ops/ ask it instead of
// deciding. Each op falls back to the libtorch reference where its kernel does not take the inputs
// (a dtype, a layout), so every backend computes every op.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "quant/quantize.h"

namespace izwi {

struct EngineConfig;
struct PanelKernels;

/// What a Backend is built from: EngineConfig's execution fields, by name.
struct BackendOptions {
  std::string device = "cpu";           ///< "cpu", "cuda", "cuda:N" or "mps"
  std::string dtype = "float32";        ///< compute dtype of activations
  std::string weight_dtype = "auto";    ///< storage of weight matrices: "auto" (EngineConfig), a dtype, int8, int4[:G]
  std::string kv_cache_dtype = "auto";  ///< storage of the paged K/V pools; "auto" = dtype
  bool fast_kernels = true;             ///< izwi's kernels where they exist; false = libtorch's ops
  std::string cpu_kernels = "auto";     ///< panel-kernel variant (kernels/cpu/panel_kernels.h)
  int threads = 0;                      ///< intra-op threads; 0 = OMP_NUM_THREADS, else every core
  int32_t max_graph_batch = 0;          ///< largest decode batch captured as a CUDA graph; 0 = none

  /// EngineConfig's fields; max_graph_batch = min(max_batch_size, 256) with use_cuda_graphs.
  static BackendOptions from_config(const EngineConfig& config);
};

class Backend {
 public:
  /// Parses the device and dtypes (InvalidArgument or Unsupported naming the EngineConfig field),
  /// sets libtorch's intra-op thread count (process-wide) and, with izwi's CPU kernels, makes
  /// OpenBLAS run on the calling thread, and picks the panel-kernel variant.
  explicit Backend(const BackendOptions& options);

  /// izwi's CPU kernels, float32, on the CPU; touches no process-wide setting. For codecs,
  /// encoders, tools and tests built outside an engine.
  static const Backend& host();
  /// The same with the panel kernels pinned to `kernels` (tests and benchmarks that run one variant).
  static Backend host(const PanelKernels& kernels);
  /// libtorch's ops on `device` in `dtype` (weights and K/V in `dtype` too); touches no
  /// process-wide setting. The reference the fast kernels are checked against.
  static Backend reference(const at::Device& device, at::ScalarType dtype);

  const at::Device& device() const { return device_; }
  at::ScalarType dtype() const { return dtype_; }
  at::ScalarType weight_dtype() const { return weight_dtype_; }
  /// How linear layers' weights are quantized as they load (weight_dtype int8 / int4); the large
  /// matrices that stay floating point (embedding tables) are then stored in weight_dtype(), bf16.
  const WeightQuantization& weight_quantization() const { return weight_quantization_; }
  /// weight_dtype "auto" with the panel kernels, which take bf16: a model's bf16 matrices stay bf16
  /// as the checkpoint stores them (WeightSource::set_keep_bf16), not widened to float32.
  bool keeps_bf16_weights() const { return keeps_bf16_weights_; }
  at::ScalarType kv_dtype() const { return kv_dtype_; }
  /// Activations' tensor options: dtype() on device().
  at::TensorOptions options() const { return at::TensorOptions().dtype(dtype_).device(device_); }

  /// izwi's CPU kernels (kernels/cpu/) run the ops.
  bool cpu_kernels() const { return kernels_ == Kernels::Cpu; }
  /// izwi's CUDA kernels (kernels/cuda/, builds with IZWI_WITH_CUDA) and cuBLAS run the ops.
  bool cuda_kernels() const { return kernels_ == Kernels::Cuda; }
  /// The variant linear weights are packed for as they load (layers/packed_weight.h): null unless
  /// the CPU kernels run in float32.
  const PanelKernels* panel_kernels() const { return panel_kernels_; }
  /// The CUDA device's compute capability, major * 10 + minor (90: Hopper); 0 off CUDA.
  int32_t cuda_sm_version() const { return cuda_sm_version_; }
  /// The CUDA device's multiprocessor count (read once: split-K decode attention plans by it each
  /// layer of each step); 0 off CUDA.
  int32_t cuda_multiprocessors() const { return cuda_multiprocessors_; }
  /// Decode steps of up to this many sequences may be captured as CUDA graphs; 0 unless the CUDA
  /// kernels run.
  int32_t max_graph_batch() const { return max_graph_batch_; }
  /// "torch", "cpu" or "cuda": whose kernels run (logs, benchmarks).
  const char* kernels_name() const;

  /// The bytes the device can still give: on the CPU MemAvailable from `meminfo_path` (the
  /// kernel's estimate of what can be allocated without swapping), on CUDA the device's free bytes
  /// (cudaMemGetInfo). Unsupported for other devices, Internal when the figure cannot be read.
  int64_t available_memory_bytes(const std::string& meminfo_path = "/proc/meminfo") const;

 private:
  enum class Kernels { Torch, Cpu, Cuda };

  Backend(const at::Device& device, at::ScalarType dtype, Kernels kernels, const PanelKernels* panel_kernels);

  at::Device device_ = at::kCPU;
  at::ScalarType dtype_ = at::kFloat;
  at::ScalarType weight_dtype_ = at::kFloat;
  WeightQuantization weight_quantization_;
  bool keeps_bf16_weights_ = false;
  at::ScalarType kv_dtype_ = at::kFloat;
  Kernels kernels_ = Kernels::Torch;
  const PanelKernels* panel_kernels_ = nullptr;
  int32_t max_graph_batch_ = 0;
  int32_t cuda_sm_version_ = 0;
  int32_t cuda_multiprocessors_ = 0;
};

/// Parses a dtype name ("float32", "bfloat16", "float16"); InvalidArgument naming `field` otherwise.
at::ScalarType parse_dtype(const std::string& name, const std::string& field = "dtype");

}  // namespace izwi
