#pragma once
// Sampling on a CUDA device (CUDA builds only): the rows' controls and id lists go to the device in
// one staged copy, kernels/cuda/sample_cuda picks the ids there, and they stay there (the caller
// copies them back, or feeds them to the next draw of a chain). The staging of a whole chain of
// draws at once (a speech model's frame, replayed as a CUDA graph) is host code of every build.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/sampling_params_cuda.h"
#include "layers/step/sampling_state.h"

namespace izwi {

/// The controls of a row drawn with `state` at its current draw index, without id lists (their
/// offsets and lengths 0).
SamplingParamsCuda device_sampling_controls(const SamplingState& state);

/// Whether a chain of draws (one per step of a frame) for these rows can read controls staged once
/// before the chain, as a CUDA graph's replay does. Not when a row needs per-draw host work or id
/// lists on the device (a repetition penalty over a history, suppressed ids, a constraint,
/// logprobs), nor when one state is given for two rows (the eager chain gives both rows the same
/// draw index and advances it twice a step).
bool chain_controls_stage(const std::vector<SamplingState*>& states);

/// The controls of a chain of `steps` draws for `states`' rows, padded with greedy rows to
/// `bucket`: [steps][bucket], step j of row r at draw index states[r]->draws + j, as `steps`
/// calls of DeviceSampler::sample would draw them. The states are not advanced.
std::vector<SamplingParamsCuda> chain_sampling_controls(const std::vector<SamplingState*>& states, int32_t steps,
                                                        int32_t bucket);

class DeviceSampler {
 public:
  /// logits [rows, vocab] on a CUDA device; row r sampled with *states[r], whose draw index
  /// advances by one. The ids [rows] (int64) stay on the device: no copy back, no wait. The logits
  /// are scratch (modified in place when already float32).
  at::Tensor sample(const at::Tensor& logits, const std::vector<SamplingState*>& states);

  /// The same draw with the rows' controls already on the device (`params` [rows], no id lists)
  /// and a caller's `workspace` (kernels/cuda/sampler_workspace_bytes(rows, vocab), zeroed): no
  /// host-to-device copy and no state, so a CUDA graph can capture it; its temporaries come from
  /// libtorch's allocator (the graph's pool when captured).
  static at::Tensor sample_staged(const at::Tensor& logits, const SamplingParamsCuda* params, uint32_t* workspace);

 private:
  /// Launches the kernel over `logits` with the rows' controls and id lists on the device.
  static at::Tensor launch(const at::Tensor& logits, const SamplingParamsCuda* params, const int32_t* id_lists,
                           uint32_t* workspace);

  at::Tensor workspace_;  ///< Device bit sets of the repetition penalty: zeroed once, left zeroed.
};

}  // namespace izwi
