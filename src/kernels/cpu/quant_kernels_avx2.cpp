// The quantized kernels compiled for avx2 (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/quant_kernels_impl.h"

namespace izwi {

const QuantKernels& quant_kernels_avx2() {
  static const QuantKernels kernels{"avx2", &run};
  return kernels;
}

}  // namespace izwi
