#pragma once
// The roofline probes the benchmarks run beside the engine: read bandwidth and FMA peak.

#include <ATen/Parallel.h>

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

/// measure_fma_peak_gflops on a short-lived thread, for the same reason.
inline double probe_fma_peak_gflops() {
  double gflops = 0;
  std::thread([&] {
    at::set_num_threads(at::get_num_threads());
    gflops = measure_fma_peak_gflops();
  }).join();
  return gflops;
}

}  // namespace izwi::bench
