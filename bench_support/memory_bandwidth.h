#pragma once

#include <cstdint>

namespace izwi {

/// Streaming read bandwidth of this machine in GB/s: the median of `passes` sums over a buffer of
/// `bytes` (far larger than the caches) using libtorch's intra-op threads, as the kernels do. The
/// median, not the best pass: on a shared VM single passes run up to twice the sustained rate.
double measure_read_bandwidth_gbps(int64_t bytes = int64_t{1} << 30, int passes = 5);

/// The probe's read: the sum of data[begin, end), limited by the loads rather than by the adds.
float sum_floats(const float* data, int64_t begin, int64_t end);

}  // namespace izwi
