// The quantized kernels compiled for portable (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/quant_kernels_impl.h"

namespace izwi {

const QuantKernels& quant_kernels_portable() {
  static const QuantKernels kernels{"portable", &run};
  return kernels;
}

}  // namespace izwi
