#pragma once

#include <cstdint>

namespace izwi {

/// Streaming read bandwidth of this machine in GB/s: the best of `passes` sums over a buffer of
/// `bytes` (far larger than the caches) using libtorch's intra-op threads, as the kernels do.
double measure_read_bandwidth_gbps(int64_t bytes = int64_t{1} << 30, int passes = 5);

}  // namespace izwi
