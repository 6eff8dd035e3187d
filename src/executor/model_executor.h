#pragma once
// The engine's view of a model: allocate cache memory once, then run one step per call.
// Implementations own the model, its cache buffers and sampling.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "layers/step/step_batch.h"
#include "layers/step/step_output.h"
#include "models/causal_lm.h"

namespace izwi {

class ModelExecutor {
 public:
  virtual ~ModelExecutor() = default;

  virtual const ModelSpec& spec() const = 0;
  /// The model itself (immutable; its const methods are safe from any thread).
  virtual const CausalLM& model() const = 0;
  /// Allocates the paged pools (`num_blocks` x `block_size` positions) and `num_state_slots`
  /// recurrent-state slots. Throws ResourceExhausted if the device cannot hold them.
  virtual void allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) = 0;
  /// Runs one step. Returns one output (a token, or a frame of codes) per sequence whose
  /// `sampling` is set, in batch order.
  virtual std::vector<StepOutput> execute(const StepBatch& batch) = 0;
  /// Runs one step and returns the logits of every new position, [T, vocab] float32 on the CPU
  /// (prompt scoring and parity checks). Caches are updated exactly as by execute().
  virtual at::Tensor execute_logits(const StepBatch& batch) = 0;
};

}  // namespace izwi
