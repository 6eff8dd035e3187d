#if IZWI_WITH_CUDA

#include "executor/cuda_decode_graphs.h"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <map>
#include <utility>

#include "common/check.h"
#include "common/op_profile.h"

namespace izwi {

namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

struct Graph {
  at::cuda::CUDAGraph graph;
  at::Tensor words;   ///< The fixed input buffer the graph reads (the capture batch's staged words).
  at::Tensor logits;  ///< The float32 logits the graph writes, [bucket, vocab]: its bucket's buffer.
};

class CudaDecodeGraphs final : public DecodeGraphs {
 public:
  explicit CudaDecodeGraphs(const DecodeGraphSettings& settings) : settings_(settings), padder_(settings.padding) {}

  bool replays(const StepBatch& batch) const override { return replayable_decode_step(batch, settings_.max_bucket); }
  std::pair<ForwardContext, at::Tensor> run(const StepBatch& batch, const CausalLM& model,
                                            CacheBuffers& cache) override;

 private:
  using Shape = std::pair<int32_t, int64_t>;  ///< (bucket, block-table width)

  std::unique_ptr<Graph> capture(const Shape& shape, const CausalLM& model, CacheBuffers& cache);
  ForwardContext stage(const StepBatch& batch, const Shape& shape);

  DecodeGraphSettings settings_;
  DecodeBatchPadder padder_;
  std::map<Shape, std::unique_ptr<Graph>> graphs_;
  /// One logits buffer per bucket, allocated outside the captures, which its widths' graphs share.
  std::map<int32_t, at::Tensor> logits_;
  /// The memory pool every graph captures into (the first capture's; vLLM shares one the same
  /// way): graphs replay one at a time on one stream and keep nothing alive in it (the warm-up
  /// pass, outside it, makes what a layer keeps), so their scratch (a bucket's logits before the
  /// cast, [bucket, vocab]) is held once, not once per graph.
  decltype(std::declval<at::cuda::CUDAGraph&>().pool()) pool_{0, 0};
};

ForwardContext CudaDecodeGraphs::stage(const StepBatch& batch, const Shape& shape) {
  return make_forward_context(padder_.pad(batch, shape.first), settings_.block_size, *settings_.backend, shape.second);
}

std::unique_ptr<Graph> CudaDecodeGraphs::capture(const Shape& shape, const CausalLM& model, CacheBuffers& cache) {
  // Captured over padding sequences only: the warm-up pass and the capture write nothing but the
  // padding block and state slot, so no running sequence's state moves twice.
  const ForwardContext ctx = stage(StepBatch{}, shape);
  auto g = std::make_unique<Graph>();
  g->words = ctx.device_seqs.words;
  // On the step stream, outside any capture: the sampler reads it there after each replay.
  at::Tensor& logits = logits_[shape.first];
  if (!logits.defined()) {
    logits = at::empty({shape.first, model.spec().vocab_size},
                       at::TensorOptions().dtype(at::kFloat).device(settings_.backend->device()));
  }
  g->logits = logits;
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // Capture needs a stream other than the legacy default one; izwi's kernels launch on libtorch's
  // current stream (kernels/cuda_stream.h), so the guard moves them there too.
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, settings_.backend->device().index());
  {
    const c10::cuda::CUDAStreamGuard guard(stream);
    const OpProfilePause pause;                    // no step's work, and a capture allows no device wait
    model.logits(model.forward(ctx, cache), ctx);  // warm-up: cuBLAS handles and workspaces exist before the capture
    check_cuda(cudaStreamSynchronize(stream.stream()), "cudaStreamSynchronize");
    g->graph.capture_begin(pool_);
    g->logits.copy_(model.logits(model.forward(ctx, cache), ctx));  // the head and the cast, in the graph
    g->graph.capture_end();
    pool_ = g->graph.pool();
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return g;
}

std::pair<ForwardContext, at::Tensor> CudaDecodeGraphs::run(const StepBatch& batch, const CausalLM& model,
                                                            CacheBuffers& cache) {
  IZWI_CHECK(replays(batch), "a step of {} sequences is not a replayable decode step", batch.seqs.size());
  const Shape shape{decode_graph_bucket(static_cast<int32_t>(batch.seqs.size()), settings_.max_bucket),
                    decode_graph_table_stride(batch, settings_.block_size, settings_.max_table_stride)};
  auto it = graphs_.find(shape);
  if (it == graphs_.end()) it = graphs_.emplace(shape, capture(shape, model, cache)).first;
  Graph& g = *it->second;
  ForwardContext ctx = stage(batch, shape);
  IZWI_CHECK(ctx.device_seqs.words.numel() == g.words.numel(), "a step staged {} words for a graph that reads {}",
             ctx.device_seqs.words.numel(), g.words.numel());
  g.words.copy_(ctx.device_seqs.words, /*non_blocking=*/true);  // same stream as the replay
  g.graph.replay();
  return {std::move(ctx), g.logits};
}

}  // namespace

std::unique_ptr<DecodeGraphs> make_cuda_decode_graphs(const DecodeGraphSettings& settings) {
  return std::make_unique<CudaDecodeGraphs>(settings);
}

}  // namespace izwi

#endif  // IZWI_WITH_CUDA
