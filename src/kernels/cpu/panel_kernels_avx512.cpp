// The panel kernels compiled for avx512 (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/panel_kernels_impl.h"

namespace izwi {

const PanelKernels& panel_kernels_avx512() {
  static const PanelKernels kernels{"avx512",       kPanelRows,   kBf16Group, kBf16RowPairs,
                                    kMaxTileTokens, &pack_inputs, &run};
  return kernels;
}

}  // namespace izwi
