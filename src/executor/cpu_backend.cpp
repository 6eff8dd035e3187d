#include "executor/cpu_backend.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "common/logging.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {

namespace {

/// OMP_NUM_THREADS, as OpenMP programs read it, when it holds a sensible count; else every core.
int default_num_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

const PanelKernels* setup_cpu_backend(const at::Device& device, bool fast_kernels, int threads,
                                      const std::string& cpu_kernels) {
  // libtorch's intra-op pool is process-wide; it defaults to one thread in Debian's build.
  at::set_num_threads(threads > 0 ? threads : default_num_threads());
  if (!fast_kernels || !device.is_cpu()) return nullptr;
  if (run_blas_on_calling_thread()) logger()->debug("OpenBLAS set to run on the calling thread");
  return cpu_kernels == "auto" ? &active_panel_kernels()
                               : &panel_kernels_named(cpu_kernels, "EngineConfig.cpu_kernels");
}

}  // namespace izwi
