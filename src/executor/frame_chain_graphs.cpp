#include "executor/frame_chain_graphs.h"

#include <cstring>
#include <map>
#include <string>

#include "common/check.h"
#include "common/logging.h"
#include "executor/decode_graph_batch.h"
#include "executor/graph_capture_failed.h"
#include "sampling/device_sampler.h"

#if IZWI_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "common/op_profile.h"
#include "executor/graph_capture.h"
#include "kernels/cuda/sampler_cuda.h"
#endif

namespace izwi {

std::vector<std::vector<int32_t>> frame_codes(const at::Tensor& ids) {
  IZWI_CHECK(ids.dim() == 2, "a frame's ids must be [rows, steps], got {} dims", ids.dim());
  const at::Tensor host = ids.to(at::kCPU, at::kInt).contiguous();
  const int64_t rows = host.size(0), steps = host.size(1);
  const int32_t* data = host.data_ptr<int32_t>();
  std::vector<std::vector<int32_t>> codes(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) codes[static_cast<size_t>(r)].assign(data + r * steps, data + (r + 1) * steps);
  return codes;
}

bool frame_chain_replays(const std::vector<SamplingState*>& states, int32_t max_bucket) {
  return decode_graph_bucket(static_cast<int32_t>(states.size()), max_bucket) > 0 && chain_controls_stage(states);
}

at::Tensor frame_chain_ids(std::optional<std::unique_ptr<FrameChainGraphs>>& graphs, const FrameChainSettings& settings,
                           const at::Tensor& inputs, const std::vector<SamplingState*>& states,
                           const std::function<FrameChain(int32_t bucket)>& make_chain,
                           const std::function<at::Tensor()>& eager) {
  if (!graphs.has_value()) graphs = make_frame_chain_graphs(settings);
  if (*graphs != nullptr && (*graphs)->replays(states)) {
    try {
      return (*graphs)->run(inputs, states, make_chain);
    } catch (const GraphCaptureFailed& e) {
      logger()->warn("{}; frames run without CUDA graphs from now on", e.what());
      graphs->reset();
    }
  }
  return eager();
}

#if IZWI_WITH_CUDA

namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) fail(ErrorCode::Internal, "{}: {}", call, cudaGetErrorString(error));
}

struct ChainGraph {
  at::cuda::CUDAGraph graph;
  FrameChain chain;      ///< Holds what the graph reads besides the buffers below.
  at::Tensor inputs;     ///< [bucket, ...]: the frame's rows first.
  at::Tensor controls;   ///< [steps][bucket] SamplingParamsCuda, as bytes.
  at::Tensor workspace;  ///< The sampler's, zeroed once; the kernel leaves it zeroed.
  at::Tensor ids;        ///< [bucket, steps] (int64): what the graph writes.
};

class CudaFrameChainGraphs final : public FrameChainGraphs {
 public:
  explicit CudaFrameChainGraphs(const FrameChainSettings& settings) : settings_(settings) {}

  at::Tensor run(const at::Tensor& inputs, const std::vector<SamplingState*>& states,
                 const std::function<FrameChain(int32_t bucket)>& make_chain) override;
  const FrameChainSettings& settings() const override { return settings_; }

 private:
  std::unique_ptr<ChainGraph> capture(int32_t bucket, const at::Tensor& inputs,
                                      const std::function<FrameChain(int32_t bucket)>& make_chain) const;
  /// `controls` laid out for the device, staged in one pinned asynchronous copy into `g`.
  static void stage(const std::vector<SamplingParamsCuda>& controls, ChainGraph& g);

  FrameChainSettings settings_;
  std::map<int32_t, std::unique_ptr<ChainGraph>> graphs_;  ///< by bucket
};

void CudaFrameChainGraphs::stage(const std::vector<SamplingParamsCuda>& controls, ChainGraph& g) {
  const int64_t bytes = static_cast<int64_t>(controls.size() * sizeof(SamplingParamsCuda));
  IZWI_CHECK(bytes == g.controls.numel(), "{} bytes of controls for a graph that reads {}", bytes, g.controls.numel());
  at::Tensor host = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  std::memcpy(host.data_ptr<uint8_t>(), controls.data(), static_cast<size_t>(bytes));
  g.controls.copy_(host, /*non_blocking=*/true);  // the pinned block is held until the copy is done
}

std::unique_ptr<ChainGraph> CudaFrameChainGraphs::capture(
    int32_t bucket, const at::Tensor& inputs, const std::function<FrameChain(int32_t bucket)>& make_chain) const {
  auto g = std::make_unique<ChainGraph>();
  std::vector<int64_t> sizes = inputs.sizes().vec();
  sizes[0] = bucket;
  g->inputs = at::zeros(sizes, inputs.options());
  const at::TensorOptions bytes = at::TensorOptions().dtype(at::kByte).device(inputs.device());
  g->controls = at::empty(
      {static_cast<int64_t>(settings_.steps) * bucket * static_cast<int64_t>(sizeof(SamplingParamsCuda))}, bytes);
  stage(chain_sampling_controls({}, settings_.steps, bucket), *g);  // greedy padding rows for the capture
  g->workspace =
      at::zeros({static_cast<int64_t>(sampler_workspace_bytes(bucket, static_cast<int32_t>(settings_.vocab)))}, bytes);
  g->chain = make_chain(bucket);
  const auto* controls = reinterpret_cast<const SamplingParamsCuda*>(g->controls.data_ptr<uint8_t>());
  auto* workspace = reinterpret_cast<uint32_t*>(g->workspace.data_ptr<uint8_t>());
  const ChainSample sample = [controls, workspace, bucket](int32_t step, const at::Tensor& logits) {
    return DeviceSampler::sample_staged(logits, controls + static_cast<int64_t>(step) * bucket, workspace);
  };
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // As the decode graphs (executor/cuda_decode_graphs.cpp): capture on a pool stream, which
  // izwi's kernels follow (kernels/cuda_stream.h).
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, inputs.device().index());
  {
    const c10::cuda::CUDAStreamGuard guard(stream);
    const OpProfilePause pause;   // no step's work, and a capture allows no device wait
    g->chain(g->inputs, sample);  // warm-up: cuBLAS handles and workspaces exist before the capture
    check_cuda(cudaStreamSynchronize(stream.stream()), "cudaStreamSynchronize");
    capture_graph(g->graph, at::cuda::MempoolId_t{0, 0}, stream.stream(),
                  "a frame chain of " + std::to_string(bucket) + " rows",
                  [&] { g->ids = g->chain(g->inputs, sample); });
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  IZWI_CHECK(g->ids.dim() == 2 && g->ids.size(0) == bucket && g->ids.size(1) == settings_.steps,
             "a captured chain gave ids of {} dims, not [{}, {}]", g->ids.dim(), bucket, settings_.steps);
  return g;
}

at::Tensor CudaFrameChainGraphs::run(const at::Tensor& inputs, const std::vector<SamplingState*>& states,
                                     const std::function<FrameChain(int32_t bucket)>& make_chain) {
  const int64_t rows = inputs.size(0);
  IZWI_CHECK(rows == static_cast<int64_t>(states.size()) && replays(states),
             "a frame of {} rows ({} sampling states) does not replay a chain graph", rows, states.size());
  const int32_t bucket = decode_graph_bucket(static_cast<int32_t>(rows), settings_.max_bucket);
  const c10::cuda::CUDAGuard device(inputs.device());
  auto it = graphs_.find(bucket);
  if (it == graphs_.end()) it = graphs_.emplace(bucket, capture(bucket, inputs, make_chain)).first;
  ChainGraph& g = *it->second;
  IZWI_CHECK(
      inputs.sizes().slice(1).equals(g.inputs.sizes().slice(1)) && inputs.scalar_type() == g.inputs.scalar_type(),
      "a frame's inputs do not match its chain graph's input buffer");
  stage(chain_sampling_controls(states, settings_.steps, bucket), g);
  g.inputs.narrow(0, 0, rows).copy_(inputs, /*non_blocking=*/true);
  g.graph.replay();
  for (SamplingState* s : states) s->draws += static_cast<uint64_t>(settings_.steps);
  return g.ids.narrow(0, 0, rows);
}

}  // namespace

#endif  // IZWI_WITH_CUDA

std::unique_ptr<FrameChainGraphs> make_frame_chain_graphs(const FrameChainSettings& settings) {
  IZWI_CHECK(settings.backend != nullptr && settings.steps > 0 && settings.vocab > 0,
             "frame chain graphs need a backend, steps and a vocabulary");
#if IZWI_WITH_CUDA
  if (settings.max_bucket > 0 && settings.backend->cuda_kernels()) {
    return std::make_unique<CudaFrameChainGraphs>(settings);
  }
#endif
  return nullptr;
}

}  // namespace izwi
