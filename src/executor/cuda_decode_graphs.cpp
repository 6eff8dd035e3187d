#if IZWI_WITH_CUDA

#include "executor/cuda_decode_graphs.h"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <map>

#include "common/check.h"

namespace izwi {

namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

struct Graph {
  at::cuda::CUDAGraph graph;
  at::Tensor words;   ///< The fixed input buffer the graph reads (the capture batch's staged words).
  at::Tensor output;  ///< The hidden states the graph writes, [bucket, hidden].
};

class CudaDecodeGraphs final : public DecodeGraphs {
 public:
  explicit CudaDecodeGraphs(const DecodeGraphSettings& settings) : settings_(settings), padder_(settings.padding) {}

  bool replays(const StepBatch& batch) const override { return replayable_decode_step(batch, settings_.max_bucket); }
  std::pair<ForwardContext, at::Tensor> run(const StepBatch& batch, const CausalLM& model,
                                            CacheBuffers& cache) override;

 private:
  std::unique_ptr<Graph> capture(int32_t bucket, const CausalLM& model, CacheBuffers& cache);
  ForwardContext stage(const StepBatch& batch, int32_t bucket);

  DecodeGraphSettings settings_;
  DecodeBatchPadder padder_;
  std::map<int32_t, std::unique_ptr<Graph>> graphs_;
};

ForwardContext CudaDecodeGraphs::stage(const StepBatch& batch, int32_t bucket) {
  return make_forward_context(padder_.pad(batch, bucket), settings_.block_size, settings_.device, settings_.dtype,
                              KernelBackend::Cuda, settings_.table_stride);
}

std::unique_ptr<Graph> CudaDecodeGraphs::capture(int32_t bucket, const CausalLM& model, CacheBuffers& cache) {
  // Captured over padding sequences only: the warm-up pass and the capture write nothing but the
  // padding block and state slot, so no running sequence's state moves twice.
  const ForwardContext ctx = stage(StepBatch{}, bucket);
  auto g = std::make_unique<Graph>();
  g->words = ctx.device_seqs.words;
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // Capture needs a stream other than the legacy default one; izwi's kernels launch on libtorch's
  // current stream (kernels/cuda_stream.h), so the guard moves them there too.
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, settings_.device.index());
  {
    const c10::cuda::CUDAStreamGuard guard(stream);
    model.forward(ctx, cache);  // warm-up: cuBLAS handles and workspaces exist before the capture
    check_cuda(cudaStreamSynchronize(stream.stream()), "cudaStreamSynchronize");
    g->graph.capture_begin();
    g->output = model.forward(ctx, cache);
    g->graph.capture_end();
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return g;
}

std::pair<ForwardContext, at::Tensor> CudaDecodeGraphs::run(const StepBatch& batch, const CausalLM& model,
                                                            CacheBuffers& cache) {
  const int32_t bucket = decode_graph_bucket(static_cast<int32_t>(batch.seqs.size()), settings_.max_bucket);
  IZWI_CHECK(bucket > 0 && replays(batch), "a step of {} sequences is not a replayable decode step", batch.seqs.size());
  auto it = graphs_.find(bucket);
  if (it == graphs_.end()) it = graphs_.emplace(bucket, capture(bucket, model, cache)).first;
  Graph& g = *it->second;
  ForwardContext ctx = stage(batch, bucket);
  IZWI_CHECK(ctx.device_seqs.words.numel() == g.words.numel(),
             "a batch of bucket {} staged {} words, its graph reads {} (a block table wider than the model's context?)",
             bucket, ctx.device_seqs.words.numel(), g.words.numel());
  g.words.copy_(ctx.device_seqs.words, /*non_blocking=*/true);  // same stream as the replay
  g.graph.replay();
  return {std::move(ctx), g.output};
}

}  // namespace

std::unique_ptr<DecodeGraphs> make_cuda_decode_graphs(const DecodeGraphSettings& settings) {
  return std::make_unique<CudaDecodeGraphs>(settings);
}

}  // namespace izwi

#endif  // IZWI_WITH_CUDA
