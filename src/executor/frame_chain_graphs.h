#pragma once
// A speech model's per-frame chain of draws (the Qwen3-TTS code predictor's 15 codebooks,
// LFM2-Audio's depthformer's 8) as CUDA graphs (CUDA builds only): one graph per power-of-two row
// bucket, captured the first time a frame of that bucket comes, over the bucket's fixed buffers.
// Per frame: the rows' inputs copied into the graph's input buffer (device to device), every
// step's sampling controls in one staged copy (draw indices precomputed, chain_sampling_controls),
// one replay, and the caller's one copy of the [rows, steps] ids back. Padding rows compute on
// whatever their input rows hold and write only their own rows: a chain's rows are independent
// (each has its own K/V and its own sampling row), so no real row reads them.

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/backend.h"
#include "layers/step/sampling_state.h"

namespace izwi {

struct FrameChainSettings {
  const Backend* backend = nullptr;  ///< The model's: the device the chain runs on.
  int32_t steps = 0;                 ///< Draws per frame.
  int64_t vocab = 0;                 ///< Logits per draw (sizes the sampler's workspace).
  int32_t max_bucket = 0;            ///< The largest row count captured (Backend::max_graph_batch).
};

/// Step `step`'s draw for the chain's rows: logits [rows, vocab] -> ids [rows] (int64), left on
/// the logits' device.
using ChainSample = std::function<at::Tensor(int32_t step, const at::Tensor& logits)>;
/// A model's chain over `inputs` [rows, ...]: ids [rows, steps] (int64) where they were drawn. The
/// one implementation of the chain's math: run eagerly with Sampler::sample_rows_on_device as its
/// ChainSample, and captured with the graph's staged controls.
using FrameChain = std::function<at::Tensor(const at::Tensor& inputs, const ChainSample& sample)>;

/// ids [rows, steps] on any device -> each row's codes, in one copy to the host.
std::vector<std::vector<int32_t>> frame_codes(const at::Tensor& ids);

/// Whether a frame of these rows can replay a graph: a bucket of at most `max_bucket` rows holds
/// them and their controls stage once a frame (chain_controls_stage). Otherwise the frame runs
/// eagerly: per-draw host work (a repetition penalty's history, suppressed ids, constraints,
/// logprobs) cannot be staged before a replay.
bool frame_chain_replays(const std::vector<SamplingState*>& states, int32_t max_bucket);

class FrameChainGraphs {
 public:
  virtual ~FrameChainGraphs() = default;

  bool replays(const std::vector<SamplingState*>& states) const {
    return frame_chain_replays(states, settings().max_bucket);
  }

  /// Runs a replayable frame: `inputs` [rows, ...] on the device, row r drawn with *states[r].
  /// `make_chain(bucket)` gives the chain to capture for a bucket met the first time; it owns what
  /// the graph reads besides the inputs (contexts, scratch K/V), kept as long as the graph. Each
  /// state's draw index advances by `steps`, as the eager chain's. Returns ids [rows, steps]
  /// (int64) on the device, valid until the next call.
  virtual at::Tensor run(const at::Tensor& inputs, const std::vector<SamplingState*>& states,
                         const std::function<FrameChain(int32_t bucket)>& make_chain) = 0;

  virtual const FrameChainSettings& settings() const = 0;
};

/// The graphs of a chain, or null where none are captured: a build without CUDA, or
/// backend->max_graph_batch() == 0 (not the Cuda backend, or EngineConfig::use_cuda_graphs off).
std::unique_ptr<FrameChainGraphs> make_frame_chain_graphs(const FrameChainSettings& settings);

/// A frame's ids [rows, steps] (int64): through the model's graphs (`graphs`, its `mutable`
/// member, made on its first frame with that frame's settings) when they replay the frame, else
/// eager(). A capture that fails (GraphCaptureFailed: nothing of the frame has run) drops the
/// model's graphs with a warning, and this frame and every later one run eagerly.
at::Tensor frame_chain_ids(std::optional<std::unique_ptr<FrameChainGraphs>>& graphs, const FrameChainSettings& settings,
                           const at::Tensor& inputs, const std::vector<SamplingState*>& states,
                           const std::function<FrameChain(int32_t bucket)>& make_chain,
                           const std::function<at::Tensor()>& eager);

}  // namespace izwi
