#if IZWI_WITH_CUDA

#include "kernels/cuda_stream.h"

#include <c10/cuda/CUDAStream.h>

namespace izwi {

cudaStream_t current_cuda_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

bool current_cuda_stream_capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(current_cuda_stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

}  // namespace izwi

#endif  // IZWI_WITH_CUDA
