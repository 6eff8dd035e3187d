#pragma once
// The roofline probes the benchmarks run beside the engine: read bandwidth and compute peak, on
// the CPU (its streaming read and FMA probes) or on another device through libtorch's ops.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "bench_support/fma_peak.h"
#include "bench_support/memory_bandwidth.h"
#include "common/op_profile.h"

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

/// A one-output request's prompt step as the op profile filed it: the rows it ran and the FLOPs
/// of its linear products (2 x in x out a row; common/op_profile.h).
struct PromptStep {
  int64_t rows = 0;
  double linear_flop = 0;
};

/// The one step in `profile` (the profile of one request that ran in one step); rows 0 when it
/// holds no step or several.
inline PromptStep prompt_step(const izwi::OpProfile& profile) {
  PromptStep step;
  for (const auto& [key, entry] : profile) {
    if (key.first != izwi::ProfiledOp::Step) continue;
    if (step.rows != 0 || entry.calls != 1) return {};
    step.rows = key.second;
  }
  const auto linear = profile.find({izwi::ProfiledOp::Linear, step.rows});
  if (linear != profile.end()) step.linear_flop = linear->second.flop;
  return step;
}

/// GFLOP of one decoded output (a token, a speech frame), counted from the engine's own linear
/// products, from the prompt steps of two one-output requests of different lengths: each ran its
/// rows through the layers and one row through what makes an output (the head; a speech model's
/// per-frame decoder too), so their difference gives the layers' FLOPs a row and the rest follows.
/// Prompts, not decode steps: on a GPU a decode step replays a CUDA graph, whose products are not
/// profiled. Absent when the products were not profiled (the compute figures are then left out,
/// not guessed).
inline std::optional<double> gflop_per_output(const PromptStep& a, const PromptStep& b) {
  if (a.rows <= 0 || b.rows <= a.rows) return std::nullopt;
  const double layers = (b.linear_flop - a.linear_flop) / static_cast<double>(b.rows - a.rows);
  const double rest = a.linear_flop - static_cast<double>(a.rows) * layers;
  if (layers <= 0 || rest < 0) return std::nullopt;
  return (layers + rest) / 1e9;
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
