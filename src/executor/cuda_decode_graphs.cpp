#if IZWI_WITH_CUDA

#include "executor/cuda_decode_graphs.h"

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <utility>

#include "common/check.h"
#include "common/op_profile.h"
#include "executor/graph_capture.h"

namespace izwi {

namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

struct Graph {
  at::cuda::CUDAGraph graph;
  at::Tensor words;   ///< The fixed input buffer the graph reads (the capture batch's staged words).
  at::Tensor inputs;  ///< From embeddings: the [bucket, hidden] embeddings it reads (its bucket's buffer).
  at::Tensor output;  ///< What it writes, its bucket's buffer: float32 logits, or the final hidden states.
};

/// A bucket's buffers, allocated on the step stream outside any capture and shared by the graphs
/// of its block-table widths: the output the step reads after each replay, and from embeddings
/// the input rows it writes before.
struct BucketBuffers {
  at::Tensor inputs, output;
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
  const BucketBuffers& buffers(int32_t bucket, const CausalLM& model);
  /// The pass a graph captures, from its bucket's buffers.
  at::Tensor pass(const CausalLM& model, const ForwardContext& ctx, CacheBuffers& cache,
                  const BucketBuffers& buffers) const;

  DecodeGraphSettings settings_;
  DecodeBatchPadder padder_;
  std::map<Shape, std::unique_ptr<Graph>> graphs_;
  std::map<int32_t, BucketBuffers> buffers_;
  /// The memory pool every graph captures into (the first capture's; vLLM shares one the same
  /// way): graphs replay one at a time on one stream and keep nothing alive in it (the warm-up
  /// pass, outside it, makes what a layer keeps), so their scratch (a bucket's logits before the
  /// cast, [bucket, vocab]) is held once, not once per graph.
  decltype(std::declval<at::cuda::CUDAGraph&>().pool()) pool_{0, 0};
};

ForwardContext CudaDecodeGraphs::stage(const StepBatch& batch, const Shape& shape) {
  return make_forward_context(padder_.pad(batch, shape.first), settings_.block_size, *settings_.backend, shape.second);
}

const BucketBuffers& CudaDecodeGraphs::buffers(int32_t bucket, const CausalLM& model) {
  BucketBuffers& b = buffers_[bucket];
  if (b.output.defined()) return b;
  const at::TensorOptions on = at::TensorOptions().device(settings_.backend->device());
  if (settings_.from_embeddings) {
    const at::TensorOptions activations = on.dtype(settings_.backend->dtype());
    // Padding rows read zeros until a step's rows have been there (finite rows: harmless, each
    // padding sequence attends to and writes only the padding block and slot).
    b.inputs = at::zeros({bucket, model.spec().hidden_size}, activations);
    b.output = at::empty({bucket, model.spec().hidden_size}, activations);
  } else {
    b.output = at::empty({bucket, model.spec().vocab_size}, on.dtype(at::kFloat));
  }
  return b;
}

at::Tensor CudaDecodeGraphs::pass(const CausalLM& model, const ForwardContext& ctx, CacheBuffers& cache,
                                  const BucketBuffers& buffers) const {
  // forward_embeddings updates its input in place: a clone keeps the buffer as the step wrote it,
  // so padding rows do not accumulate replay after replay.
  if (settings_.from_embeddings) return model.forward_embeddings(buffers.inputs.clone(), ctx, cache);
  return model.logits(model.forward(ctx, cache), ctx);
}

std::unique_ptr<Graph> CudaDecodeGraphs::capture(const Shape& shape, const CausalLM& model, CacheBuffers& cache) {
  // Captured over padding sequences only: the warm-up pass and the capture write nothing but the
  // padding block and state slot, so no running sequence's state moves twice.
  const ForwardContext ctx = stage(StepBatch{}, shape);
  auto g = std::make_unique<Graph>();
  g->words = ctx.device_seqs.words;
  const BucketBuffers& bucket = buffers(shape.first, model);  // on the step stream, outside any capture
  g->inputs = bucket.inputs;
  g->output = bucket.output;
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // Capture needs a stream other than the legacy default one; izwi's kernels launch on libtorch's
  // current stream (kernels/cuda_stream.h), so the guard moves them there too.
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, settings_.backend->device().index());
  {
    const c10::cuda::CUDAStreamGuard guard(stream);
    const OpProfilePause pause;       // no step's work, and a capture allows no device wait
    pass(model, ctx, cache, bucket);  // warm-up: cuBLAS handles and workspaces exist before the capture
    check_cuda(cudaStreamSynchronize(stream.stream()), "cudaStreamSynchronize");
    capture_graph(g->graph, pool_, stream.stream(), "the decode graph of " + std::to_string(shape.first) + " sequences",
                  [&] { g->output.copy_(pass(model, ctx, cache, bucket)); });  // the head and the cast too, for logits
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
  if (settings_.from_embeddings) {
    // The per-row host work sees the batch's own sequences only; their rows go first.
    ctx = write_input_embeddings(model, ctx, batch.seqs.size(), g.inputs);
  }
  g.graph.replay();
  return {std::move(ctx), g.output};
}

}  // namespace

std::unique_ptr<DecodeGraphs> make_cuda_decode_graphs(const DecodeGraphSettings& settings) {
  return std::make_unique<CudaDecodeGraphs>(settings);
}

}  // namespace izwi

#endif  // IZWI_WITH_CUDA
