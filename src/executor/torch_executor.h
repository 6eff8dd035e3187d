#pragma once
// ModelExecutor on libtorch, on the device, dtypes and kernels its Backend chose.

#include <ATen/ATen.h>

#include <memory>
#include <utility>

#include "executor/model_executor.h"
#include "kernels/backend.h"
#include "layers/step/cache_buffers.h"
#include "sampling/sampler.h"

namespace izwi {

class DecodeGraphs;

class TorchExecutor final : public ModelExecutor {
 public:
  /// Runs `model` (loaded for `backend`) with `backend`'s ops; decode steps of up to
  /// backend->max_graph_batch() sequences replay CUDA graphs when the model's spec is
  /// graph_safe_decode (CUDA builds).
  TorchExecutor(std::unique_ptr<CausalLM> model, std::shared_ptr<const Backend> backend);
  ~TorchExecutor() override;

  const ModelSpec& spec() const override { return model_->spec(); }
  const CausalLM& model() const override { return *model_; }
  void allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) override;
  std::vector<StepOutput> execute(const StepBatch& batch) override;
  at::Tensor execute_logits(const StepBatch& batch) override;

 private:
  /// Applies the step's block copies and runs the model: the context the output head needs and
  /// the hidden states of every new position (of a padded batch when a CUDA graph ran it).
  std::pair<ForwardContext, at::Tensor> forward(const StepBatch& batch);
  /// Appends the prompt logprobs of the batch's sequences that ask for them (StepSequence::scoring).
  void score_prompts(const StepBatch& batch, const ForwardContext& ctx, const at::Tensor& hidden);

  std::shared_ptr<const Backend> backend_;  ///< Declared first: the model's parts may refer to it.
  std::unique_ptr<CausalLM> model_;
  std::unique_ptr<CacheBuffers> cache_;
  std::unique_ptr<DecodeGraphs> graphs_;  ///< Declared after cache_: destroyed before the pools it captured.
  Sampler sampler_;
};

}  // namespace izwi
