#if IZWI_WITH_CUDA

#include "executor/graph_capture.h"

namespace izwi {

void abandon_graph_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t recorded = nullptr;
    if (cudaStreamEndCapture(stream, &recorded) == cudaSuccess && recorded != nullptr) cudaGraphDestroy(recorded);
  }
  cudaGetLastError();  // an invalidated capture's error is not sticky: clear it for the eager step
}

}  // namespace izwi

#endif  // IZWI_WITH_CUDA
