#pragma once
// ModelExecutor on libtorch, on the device, dtypes and kernels its Backend chose.

#include <ATen/ATen.h>

#include <memory>
#include <utility>
#include <vector>

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
  /// graph_safe_decode or graph_safe_decode_from_embeddings (CUDA builds).
  TorchExecutor(std::unique_ptr<CausalLM> model, std::shared_ptr<const Backend> backend);
  ~TorchExecutor() override;

  const ModelSpec& spec() const override { return model_->spec(); }
  const CausalLM& model() const override { return *model_; }
  void allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) override;
  std::vector<StepOutput> execute(const StepBatch& batch) override;
  at::Tensor execute_logits(const StepBatch& batch) override;

 private:
  /// A step's forward pass: the context the output head needs and either the hidden states of
  /// every new position (from a graph from embeddings: of the padded batch, the batch's own rows
  /// first) or, when a CUDA graph ran it with the head, the float32 logits of the padded batch
  /// (one row per sequence, the batch's own first).
  struct Forwarded {
    ForwardContext ctx;
    at::Tensor hidden;
    at::Tensor logits;
  };
  /// The prompt positions a step scores (StepSequence::scoring): their rows, the token each
  /// predicts, the top-k asked and the state each record goes to.
  struct PromptScores {
    std::vector<int64_t> rows;
    std::vector<int32_t> targets, top;
    std::vector<SamplingState*> owners;
  };

  /// Applies the step's block copies and runs the model.
  Forwarded forward(const StepBatch& batch);
  static PromptScores prompt_scores(const StepBatch& batch);
  /// The logits of `count` of the step's new positions: those `index` (on the device) names, or
  /// the first `count` when it is undefined; the graph's rows, or the head over those hidden states.
  at::Tensor logits_of(const Forwarded& step, int64_t count, const at::Tensor& index) const;

  std::shared_ptr<const Backend> backend_;  ///< Declared first: the model's parts may refer to it.
  std::unique_ptr<CausalLM> model_;
  std::unique_ptr<CacheBuffers> cache_;
  std::unique_ptr<DecodeGraphs> graphs_;  ///< Declared after cache_: destroyed before the pools it captured.
  Sampler sampler_;
};

}  // namespace izwi
