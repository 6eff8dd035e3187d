#include "bench_support/fma_peak.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "kernels/cpu/simd.h"

namespace izwi {

double measure_fma_peak_gflops(int passes) {
#if IZWI_SIMD_LANES > 0
  // More independent chains than FMA pipes x latency (2 x 4 on current x86 cores), all in registers.
  constexpr int kChains = 10;
  constexpr int64_t kIterations = int64_t{1} << 25;  // about 50 ms a pass: long enough to hide thread start-up
  const int threads = at::get_num_threads();
  std::vector<double> rates;
  std::atomic<int64_t> sink{0};
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    at::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        simd::Vec acc[kChains];
        for (int c = 0; c < kChains; ++c) acc[c] = simd::broadcast(1.0f + 1e-3f * static_cast<float>(c));
        const simd::Vec a = simd::broadcast(0.999999f), b = simd::broadcast(1e-7f);
        for (int64_t i = 0; i < kIterations; ++i) {
#pragma GCC unroll 10
          for (int c = 0; c < kChains; ++c) acc[c] = simd::fmadd(acc[c], a, b);
        }
        simd::Vec total = acc[0];
        for (int c = 1; c < kChains; ++c) total = simd::add(total, acc[c]);
        sink += simd::reduce_add(total) > 0 ? 1 : 0;  // keeps the chains observable
      }
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double flops = 2.0 * simd::kLanes * kChains * static_cast<double>(kIterations) * threads;
    rates.push_back(flops / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
#else
  (void)passes;
  return 0;
#endif
}

}  // namespace izwi
