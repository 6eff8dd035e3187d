#pragma once
// The roofline probes the benchmarks run beside the engine: read bandwidth and FMA peak.

#include <ATen/Parallel.h>

#include <algorithm>
#include <string>
#include <thread>

#include "kernels/cpu/fma_peak.h"
#include "kernels/cpu/memory_bandwidth.h"

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
/// `weight_dtype` ("bfloat16", or "auto" = float32 on the CPU): one multiply-add per weight.
inline double gflop_per_step(int64_t weight_bytes, const std::string& weight_dtype) {
  const double bytes_per_weight = weight_dtype == "bfloat16" ? 2.0 : 4.0;
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

}  // namespace izwi::bench
