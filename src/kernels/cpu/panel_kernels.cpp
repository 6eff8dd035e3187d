#include "kernels/cpu/panel_kernels.h"

#include <cstdlib>

#include "common/check.h"

namespace izwi {

std::vector<const PanelKernels*> supported_panel_kernels() {
  std::vector<const PanelKernels*> kernels;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")) {
    kernels.push_back(&panel_kernels_avx512_bf16());
  }
  if (__builtin_cpu_supports("avx512f")) kernels.push_back(&panel_kernels_avx512());
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kernels.push_back(&panel_kernels_avx2());
#endif
  kernels.push_back(&panel_kernels_portable());
  return kernels;
}

const PanelKernels& panel_kernels_named(const std::string& name, const std::string& what) {
  std::string names;
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    if (kernels->name == name) return *kernels;
    names += names.empty() ? kernels->name : std::string(", ") + kernels->name;
  }
  fail(ErrorCode::InvalidArgument, "{} '{}': this CPU runs {}", what, name, names);
}

namespace {

const PanelKernels& choose_panel_kernels() {
  const char* requested = std::getenv("IZWI_CPU_KERNELS");
  if (requested != nullptr && *requested != '\0') return panel_kernels_named(requested, "IZWI_CPU_KERNELS");
  return *supported_panel_kernels().front();
}

}  // namespace

const PanelKernels& active_panel_kernels() {
  static const PanelKernels& chosen = choose_panel_kernels();
  return chosen;
}

}  // namespace izwi
