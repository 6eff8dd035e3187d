// The quantized kernels compiled for avx512_vnni (src/CMakeLists.txt sets this file's instruction-set flags).
#include "kernels/cpu/quant_kernels_impl.h"

namespace izwi {

const QuantKernels& quant_kernels_avx512_vnni() {
  static const QuantKernels kernels{"avx512_vnni", &run};
  return kernels;
}

}  // namespace izwi
