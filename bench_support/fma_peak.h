#pragma once

namespace izwi {

/// Peak float32 FMA throughput of this machine in GFLOP/s (2 flops per lane per FMA) with
/// libtorch's intra-op threads, each running independent chains of the widest vector FMA the
/// kernels are built with (simd.h): the compute roofline beside the memory-bandwidth one. The
/// median of `passes`; 0 when the kernels were built without a vector unit.
double measure_fma_peak_gflops(int passes = 5);

}  // namespace izwi
