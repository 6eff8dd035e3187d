// The panel kernels compiled for avx2 (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/panel_kernels_impl.h"

namespace izwi {

const PanelKernels& panel_kernels_avx2() {
  static const PanelKernels kernels{"avx2", kPanelRows, kBf16Group, kBf16RowPairs, kMaxTileTokens, &pack_inputs, &run};
  return kernels;
}

}  // namespace izwi
