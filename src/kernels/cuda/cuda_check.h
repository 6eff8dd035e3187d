#pragma once
// Errors of the CUDA launch wrappers: each wrapper checks its launch and throws a message naming
// the kernel, so a failure surfaces at the op that caused it rather than at the next sync.

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace izwi {

inline void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) +
                             ")");
  }
}

/// After a kernel launch: configuration errors and earlier asynchronous faults.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

/// Throws std::invalid_argument naming the kernel when a precondition on the arguments fails.
inline void require(bool condition, const char* kernel, const char* message) {
  if (!condition) throw std::invalid_argument(std::string(kernel) + ": " + message);
}

}  // namespace izwi
