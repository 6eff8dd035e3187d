#include "bench_support/memory_bandwidth.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

namespace izwi {

float sum_floats(const float* data, int64_t begin, int64_t end) {
  // Eight independent sums so the loop is limited by loads, not by add latency.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
#pragma omp simd
    for (int k = 0; k < 8; ++k) acc[k] += data[i + k];
  }
  for (; i < end; ++i) acc[0] += data[i];
  float total = 0;
  for (float a : acc) total += a;
  return total;
}

double measure_read_bandwidth_gbps(int64_t bytes, int passes) {
  const int64_t n = bytes / static_cast<int64_t>(sizeof(float));
  const at::Tensor buffer = at::ones({n}, at::kFloat);
  const float* data = buffer.data_ptr<float>();
  std::vector<double> rates;
  std::atomic<int64_t> sink{0};
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    at::parallel_for(0, n, n / (4 * at::get_num_threads()), [&](int64_t begin, int64_t end) {
      sink += static_cast<int64_t>(sum_floats(data, begin, end));  // keeps the reads observable
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(static_cast<double>(n) * sizeof(float) / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return sink.load() > 0 ? rates[rates.size() / 2] : 0;
}

}  // namespace izwi
