#include "common/spin_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace izwi::cli {

void use_shared_core_spin_policy(char** argv) {
  // Set by the user (GOMP_SPINCOUNT=300000 keeps libgomp's default), or by the re-exec below.
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", kToolSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT");  // execv failed: this process's libgomp keeps its default anyway
}

}  // namespace izwi::cli
