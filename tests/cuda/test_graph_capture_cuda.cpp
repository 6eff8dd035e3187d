// capture_graph (executor/graph_capture.h) when the captured work throws: a host-side refusal (the
// capture itself still valid) and a sync inside the capture (the capture invalidated). Either way
// the caller gets GraphCaptureFailed, the stream is no longer capturing and runs eagerly, and the
// next capture (into a pool shared with an earlier graph, as the decode graphs share one) records
// and replays: libtorch's allocator was told the failed capture ended.
// Written on 2026-11-29 and compile-checked only: not yet run on a GPU.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <stdexcept>

#include "cuda/cuda_test_util.h"
#include "executor/graph_capture.h"

namespace izwi {
namespace {

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cuda_test::check(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

TEST(GraphCaptureCuda, AFailedCaptureLeavesTheStreamEagerAndTheNextCaptureWorks) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  const c10::cuda::CUDAStreamGuard guard(stream);
  const at::Tensor x = at::ones({4096}, at::TensorOptions().device(at::kCUDA));
  x.sum().item<float>();  // kernels loaded, outside any capture

  // The first graph's pool, shared by every later capture here (as the decode graphs share one).
  at::cuda::CUDAGraph first;
  at::Tensor doubled;
  capture_graph(first, at::cuda::MempoolId_t{0, 0}, stream.stream(), "the first graph", [&] { doubled = x * 2; });
  const auto pool = first.pool();

  for (const bool invalidate : {false, true}) {
    SCOPED_TRACE(invalidate ? "a sync inside the capture" : "a refusal on the host");
    at::cuda::CUDAGraph failed;
    try {
      capture_graph(failed, pool, stream.stream(), "a failing graph", [&] {
        const at::Tensor y = x * 3;  // an allocation in the pool, then the failure
        if (invalidate) y.sum().item<float>();
        throw std::runtime_error("refused");
      });
      ADD_FAILURE() << "the capture did not fail";
    } catch (const GraphCaptureFailed& e) {
      EXPECT_NE(std::string(e.what()).find("a failing graph"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(capturing(stream.stream()));
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ((x + 1).sum().item<float>(), 2.0f * 4096);  // eager work on the stream

    at::cuda::CUDAGraph next;
    at::Tensor tripled;
    capture_graph(next, pool, stream.stream(), "the next graph", [&] { tripled = x * 3; });
    next.replay();
    first.replay();
    EXPECT_EQ(tripled.sum().item<float>(), 3.0f * 4096);
    EXPECT_EQ(doubled.sum().item<float>(), 2.0f * 4096);
  }
  // Freeing the cache needs no capture underway: a failed capture left behind would stop it.
  c10::cuda::CUDACachingAllocator::emptyCache();
  EXPECT_EQ((x * 4).sum().item<float>(), 4.0f * 4096);
}

}  // namespace
}  // namespace izwi
