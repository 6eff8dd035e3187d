#pragma once
// The stream izwi's CUDA kernels launch on (CUDA builds only): libtorch's current stream, so the
// kernels are ordered with libtorch's ops and a CUDA graph captures them with the rest of a step
// (capture runs on a side stream, which the legacy default stream would not join).

#include <cuda_runtime_api.h>

namespace izwi {

cudaStream_t current_cuda_stream();

/// Whether a CUDA graph is capturing the current stream: work that depends on host values of the
/// step (per-sequence loops) must not run then, as the graph would replay the capture batch's.
bool current_cuda_stream_capturing();

}  // namespace izwi
