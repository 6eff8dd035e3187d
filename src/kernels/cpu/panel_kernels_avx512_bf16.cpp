// The panel kernels compiled for AVX-512 with avx512_bf16: bf16 weights multiplied by inputs rounded
// to bf16 with vdpbf16ps (src/CMakeLists.txt sets this file's instruction-set flags).
#define IZWI_PANEL_BF16_DOT 1
#include "kernels/cpu/panel_kernels_impl.h"

namespace izwi {

const PanelKernels& panel_kernels_avx512_bf16() {
  static const PanelKernels kernels{"avx512_bf16",  kPanelRows,   kBf16Group, kBf16RowPairs,
                                    kMaxTileTokens, &pack_inputs, &run};
  return kernels;
}

}  // namespace izwi
