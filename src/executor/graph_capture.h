#pragma once
// Capturing a CUDA graph (CUDA builds only). Thread-local where libtorch takes a capture mode
// (2.x), so work the engine's other threads put on the GPU meanwhile (a caller making a voice runs
// the speaker and codec encoders, with host syncs) neither invalidates the worker's capture nor
// fails as an unsafe call during it; libtorch 1.x captures in global mode only. A capture that
// throws is abandoned cleanly and reported as GraphCaptureFailed, so the caller can run eagerly.

#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime_api.h>

#include <exception>
#include <string>

#include "executor/graph_capture_failed.h"

namespace izwi {

namespace graph_capture_detail {

template <typename Graph, typename Pool>
auto begin(Graph& graph, Pool pool, int) -> decltype(graph.capture_begin(pool, cudaStreamCaptureModeThreadLocal)) {
  return graph.capture_begin(pool, cudaStreamCaptureModeThreadLocal);
}

template <typename Graph, typename Pool>
void begin(Graph& graph, Pool pool, long) {
  graph.capture_begin(pool);
}

}  // namespace graph_capture_detail

/// After a capture on `stream` threw: ends the capture if the stream is still capturing, discards
/// what it recorded and clears the (non-sticky) capture error, so the stream runs eagerly again.
void abandon_graph_capture(cudaStream_t stream);

/// Captures `work` into `graph` on `stream` (the current stream), from capture_begin(pool) to
/// capture_end. What it throws becomes GraphCaptureFailed naming `what`, after the capture is
/// abandoned.
template <typename Pool, typename Work>
void capture_graph(at::cuda::CUDAGraph& graph, Pool pool, cudaStream_t stream, const std::string& what, Work&& work) {
  bool begun = false, ending = false;
  try {
    graph_capture_detail::begin(graph, pool, 0);  // thread-local where libtorch allows it
    begun = true;
    work();
    ending = true;
    graph.capture_end();
  } catch (const std::exception& e) {
    // capture_begin routed the capture's device allocations into the graph's pool, behind a filter
    // that points at `graph`, and only capture_end ends that: left routed, libtorch would count a
    // capture underway for good (no freeing of cached blocks to retry an allocation) and call the
    // filter of a destroyed graph. For a capture the work refused on the host, capture_end ends
    // everything. For one CUDA invalidated it throws, having ended the routing or not as the
    // libtorch version does (the newest do); it must not run twice, so a failed capture_end stays.
    // After a failed capture_begin it must not run at all (libtorch 1.x would count one capture
    // fewer than are underway, for good).
    if (begun && !ending) {
      try {
        graph.capture_end();
      } catch (const std::exception&) {
        // Invalidated: abandon_graph_capture ends what is left of the stream's capture.
      }
    }
    abandon_graph_capture(stream);
    throw GraphCaptureFailed("capturing " + what + ": " + e.what());
  }
}

}  // namespace izwi
