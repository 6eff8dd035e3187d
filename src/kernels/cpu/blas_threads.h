#pragma once

namespace izwi {

/// Makes OpenBLAS, when it is the BLAS libtorch loaded, run each call on the calling thread.
/// Its own worker threads spin after every call and fight the engine's OpenMP workers for the
/// cores (speech streams on 2 cores: 8 streams' p50 latency 302 -> 134 ms). Process-wide, since
/// OpenBLAS keeps one setting; returns whether OpenBLAS was found.
bool run_blas_on_calling_thread();

}  // namespace izwi
