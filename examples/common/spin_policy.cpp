#include "common/spin_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace izwi::cli {
namespace {

bool names(const char* entry, const char* variable) {
  const size_t n = std::strlen(variable);
  return std::strncmp(entry, variable, n) == 0 && entry[n] == '=';
}

// Runs before libc and every library are initialised: plain C calls only. A user's GOMP_SPINCOUNT
// (GOMP_SPINCOUNT=300000 keeps libgomp's default) or OMP_WAIT_POLICY is kept, and the re-executed
// program finds the variable set and carries on. Where the re-exec fails the program runs with
// libgomp's default.
void reexec_with_tool_spin_count(int /*argc*/, char** argv, char** envp) {
  size_t count = 0;
  for (; envp[count] != nullptr; ++count) {
    if (names(envp[count], "GOMP_SPINCOUNT") || names(envp[count], "OMP_WAIT_POLICY")) return;
  }
  static char spin[] = "GOMP_SPINCOUNT=";
  char* setting = static_cast<char*>(std::malloc(sizeof(spin) + std::strlen(kToolSpinCount)));
  char** env = static_cast<char**>(std::malloc((count + 2) * sizeof(char*)));
  if (setting == nullptr || env == nullptr) return;
  std::strcpy(setting, spin);
  std::strcat(setting, kToolSpinCount);
  std::memcpy(env, envp, count * sizeof(char*));
  env[count] = setting;
  env[count + 1] = nullptr;
  execve("/proc/self/exe", argv, env);
  std::free(env);
  std::free(setting);
}

}  // namespace
}  // namespace izwi::cli

// glibc calls an executable's .preinit_array entries with (argc, argv, envp).
__attribute__((section(".preinit_array"),
               used)) static void (*const izwi_tool_spin_policy)(int, char**,
                                                                 char**) = izwi::cli::reexec_with_tool_spin_count;
