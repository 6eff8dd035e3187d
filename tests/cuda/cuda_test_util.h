#pragma once
// Device buffers and comparisons for the CUDA-against-CPU kernel tests.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace izwi::cuda_test {

inline void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

/// A device copy of a host vector; to_host() waits for the default stream and copies back.
/// The tests skip (GTEST_SKIP) on a machine without a CUDA device.
inline bool has_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : size_(host.size()) {
    check(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()), "cudaMalloc");
    check(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  explicit DeviceBuffer(size_t size) : DeviceBuffer(std::vector<T>(size)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr_); }

  T* get() const { return ptr_; }
  std::vector<T> to_host() const {
    check(cudaDeviceSynchronize(), "kernel");
    std::vector<T> host(size_);
    check(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return host;
  }

 private:
  size_t bytes() const { return size_ * sizeof(T); }
  T* ptr_ = nullptr;
  size_t size_;
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// |actual - expected| <= tolerance * max(1, |expected|) for every element: the kernels sum in
/// another order than the CPU, so results agree to rounding, not bit for bit.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const float bound = tolerance * std::max(1.0f, std::fabs(expected[i]));
    if (!(std::fabs(actual[i] - expected[i]) <= bound) && reported++ < 10) {
      ADD_FAILURE() << "element " << i << ": cuda " << actual[i] << ", cpu " << expected[i];
    }
  }
}

}  // namespace izwi::cuda_test
