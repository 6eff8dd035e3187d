#include "executor/device_memory.h"

#include <fstream>
#include <sstream>

#include "common/check.h"
#if IZWI_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace izwi {

namespace {

int64_t mem_available(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::Internal, "cannot read {} for the free memory", path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    int64_t kib = -1;
    if (fields >> key >> kib >> unit && key == "MemAvailable:" && unit == "kB" && kib >= 0) return kib * 1024;
  }
  fail(ErrorCode::Internal, "{} has no 'MemAvailable: N kB' line", path);
}

#if IZWI_WITH_CUDA
void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

// index -1: the current device, as libtorch takes "cuda" without one.
int64_t cuda_free_bytes(int index) {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(index < 0 ? previous : index), "cudaSetDevice");
  size_t free = 0, total = 0;
  const cudaError_t status = cudaMemGetInfo(&free, &total);
  check(cudaSetDevice(previous), "cudaSetDevice");
  check(status, "cudaMemGetInfo");
  return static_cast<int64_t>(free);
}
#endif

}  // namespace

int64_t available_memory_bytes(const at::Device& device, const std::string& meminfo_path) {
  if (device.is_cpu()) return mem_available(meminfo_path);
#if IZWI_WITH_CUDA
  if (device.is_cuda()) return cuda_free_bytes(device.has_index() ? device.index() : -1);
#endif
  fail(ErrorCode::Unsupported,
       "EngineConfig.kv_cache_memory_fraction: the free memory of device '{}' is unknown; "
       "set num_kv_blocks instead",
       device.str());
}

}  // namespace izwi
