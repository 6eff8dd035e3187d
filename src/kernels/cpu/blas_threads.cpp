#include "kernels/cpu/blas_threads.h"

#include <dlfcn.h>

namespace izwi {

bool run_blas_on_calling_thread() {
  // Looked up at run time: libtorch may be built against another BLAS, or none.
  using SetThreads = void (*)(int);
  const auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set_threads == nullptr) return false;
  set_threads(1);
  return true;
}

}  // namespace izwi
