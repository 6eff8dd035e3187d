#pragma once
// Which implementation of each op a forward pass runs, chosen once per engine from its device and
// EngineConfig::use_fast_kernels, and read by the op dispatch points in kernels/ops/. Each op
// falls back to the libtorch reference where its kernel does not take the inputs (a dtype, a
// layout), so every backend computes every op.

#include <ATen/ATen.h>

namespace izwi {

enum class KernelBackend {
  Torch,  ///< libtorch's ops on any device: the reference, and what MPS runs
  Cpu,    ///< izwi's CPU kernels (kernels/cpu/)
  Cuda,   ///< izwi's CUDA kernels (kernels/cuda/, builds with IZWI_WITH_CUDA), cuBLAS products
};

/// Cpu on a CPU device and Cuda on a CUDA device when `fast_kernels` (Cuda only in builds with
/// IZWI_WITH_CUDA), Torch otherwise.
KernelBackend select_kernel_backend(const at::Device& device, bool fast_kernels);

const char* kernel_backend_name(KernelBackend backend);

}  // namespace izwi
