// The panel kernels compiled for portable (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/panel_kernels_impl.h"

namespace izwi {

const PanelKernels& panel_kernels_portable() {
  static const PanelKernels kernels{"portable",     kPanelRows,   kBf16Group, kBf16RowPairs,
                                    kMaxTileTokens, &pack_inputs, &run};
  return kernels;
}

}  // namespace izwi
