#pragma once
// The roofline probes the benchmarks run beside the engine: read bandwidth and compute peak, on
// the CPU (its streaming read and FMA probes) or on another device through libtorch's ops.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "bench_support/fma_peak.h"
#include "bench_support/memory_bandwidth.h"

namespace izwi::bench {

/// measure_read_bandwidth_gbps on a short-lived thread: an OpenMP team started from the calling
/// (main) thread would outlive the probe, and libgomp, counting more threads than cores, would then
/// make the engine's worker team sleep between kernels instead of spinning briefly.
inline double probe_bandwidth_gbps() {
  double gbps = 0;
  std::thread([&] {
    at::set_num_threads(at::get_num_threads());
    gbps = measure_read_bandwidth_gbps();
  }).join();
  return gbps;
}

/// GFLOP of one decode step (per sequence) through weights of `weight_bytes` stored as
/// `weight_dtype` ("bfloat16", "float16", else float32): one multiply-add per weight.
inline double gflop_per_step(int64_t weight_bytes, const std::string& weight_dtype) {
  // int8 / int4 also read their scales (kernels/cpu/quant_kernels.h): 1 + 4 / in and 0.5 + 2 / 32
  // bytes per weight; their nominal sizes slightly overcount the FLOPs.
  const double bytes_per_weight = weight_dtype == "bfloat16" || weight_dtype == "float16" ? 2.0
                                  : weight_dtype == "int8"                                ? 1.0
                                  : weight_dtype.rfind("int4", 0) == 0                    ? 0.5
                                                                                          : 4.0;
  return 2.0 * static_cast<double>(weight_bytes) / bytes_per_weight / 1e9;
}

/// measure_fma_peak_gflops with `threads` threads (0 = all hardware threads) on a short-lived
/// thread. Run it before the engine exists: the engine's own OpenMP team, spinning between its
/// kernels, would take cores from the probe's (measured: 98 instead of 160-180 GFLOP/s on 2 cores).
inline double probe_fma_peak_gflops(int threads) {
  double gflops = 0;
  std::thread([&] {
    at::set_num_threads(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    gflops = measure_fma_peak_gflops();
  }).join();
  return gflops;
}

/// Best seconds per call of `work` (device work, queued) over `reps` calls, each timed through a
/// scalar of its result copied back to the host, which waits for the device (ATen has no
/// device-neutral synchronise). `calls` calls per timing amortise that copy.
template <typename Work>
double device_seconds_per_call(Work&& work, int reps, int calls) {
  work().sum().template item<float>();  // warm-up: allocations, library handles
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    at::Tensor total = work().sum();
    for (int c = 1; c < calls; ++c) total = total + work().sum();
    total.template item<float>();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  return best;
}

/// Read bandwidth of a non-CPU device, measured as the CPU probe measures it: a float32 sum over a
/// buffer far larger than any cache (1 GiB), best of 5.
inline double probe_device_bandwidth_gbps(const at::Device& device) {
  const at::Tensor x = at::ones({int64_t{1} << 28}, at::TensorOptions().dtype(at::kFloat).device(device));
  const double seconds = device_seconds_per_call([&] { return x; }, 5, 10);
  return static_cast<double>(x.numel() * 4) / seconds / 1e9;
}

/// A non-CPU device's practical compute peak: 8192-square matrix products in `dtype` through
/// libtorch (cuBLAS on CUDA), best of 5.
inline double probe_device_matmul_gflops(const at::Device& device, at::ScalarType dtype) {
  const int64_t n = 8192;
  const at::Tensor a = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  const at::Tensor b = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  const double seconds = device_seconds_per_call([&] { return at::matmul(a, b); }, 5, 4);
  return 2.0 * static_cast<double>(n * n * n) / seconds / 1e9;
}

}  // namespace izwi::bench
