#include "kernels/backend.h"

namespace izwi {

KernelBackend select_kernel_backend(const at::Device& device, bool fast_kernels) {
  if (!fast_kernels) return KernelBackend::Torch;
  if (device.is_cpu()) return KernelBackend::Cpu;
#if IZWI_WITH_CUDA
  if (device.is_cuda()) return KernelBackend::Cuda;
#endif
  return KernelBackend::Torch;
}

const char* kernel_backend_name(KernelBackend backend) {
  switch (backend) {
    case KernelBackend::Torch:
      return "torch";
    case KernelBackend::Cpu:
      return "cpu";
    case KernelBackend::Cuda:
      return "cuda";
  }
  return "unknown";
}

}  // namespace izwi
