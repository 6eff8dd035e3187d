#pragma once
// The stream izwi's CUDA kernels launch on (CUDA builds only): libtorch's current stream, so the
// kernels are ordered with libtorch's ops and a CUDA graph captures them with the rest of a step
// (capture runs on a side stream, which the legacy default stream would not join).

#include <cuda_runtime_api.h>

namespace izwi {

cudaStream_t current_cuda_stream();

}  // namespace izwi
