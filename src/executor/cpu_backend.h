#pragma once
// The CPU side of the backend an engine runs on, set up once before its model loads, so the
// engine never reaches into kernel code: libtorch's intra-op thread count (process-wide),
// OpenBLAS's threading, and the variant of the CPU linear kernel the weights are packed for.

#include <ATen/ATen.h>

#include <string>

namespace izwi {

struct PanelKernels;

/// Sets the intra-op threads (`threads` > 0, else OMP_NUM_THREADS when it holds a count in
/// [1, 1024], else every core) and, with izwi's kernels on a CPU device, makes OpenBLAS run on the
/// calling thread. Returns the panel-kernel variant to pack linear weights for (`cpu_kernels`:
/// "auto" or a variant name, kernels/cpu/panel_kernels.h), or null when izwi's CPU kernels do not
/// run (another device, or `fast_kernels` off).
const PanelKernels* setup_cpu_backend(const at::Device& device, bool fast_kernels, int threads,
                                      const std::string& cpu_kernels);

}  // namespace izwi
