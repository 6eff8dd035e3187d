#pragma once
// ModelExecutor on libtorch, parameterised by device (CPU, CUDA, MPS) and compute dtype.

#include <ATen/ATen.h>

#include <memory>
#include <utility>

#include "executor/model_executor.h"
#include "kernels/backend.h"
#include "layers/step/cache_buffers.h"
#include "sampling/sampler.h"

namespace izwi {

struct TorchExecutorOptions {
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;     ///< Activations and small tensors.
  at::ScalarType kv_dtype = at::kFloat;  ///< The paged K/V pools (EngineConfig::kv_cache_dtype).
  bool fast_kernels = true;              ///< CPU kernels where they exist; false = plain libtorch ops.
  /// CUDA graphs for decode steps of up to this many sequences (Cuda backend, models whose spec is
  /// graph_safe_decode; CUDA builds); 0 = every step runs eagerly.
  int32_t max_graph_batch = 0;
};

class DecodeGraphs;

class TorchExecutor final : public ModelExecutor {
 public:
  TorchExecutor(std::unique_ptr<CausalLM> model, const TorchExecutorOptions& options);
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

  std::unique_ptr<CausalLM> model_;
  TorchExecutorOptions options_;
  KernelBackend backend_;  ///< chosen once from the device and options_.fast_kernels
  std::unique_ptr<CacheBuffers> cache_;
  std::unique_ptr<DecodeGraphs> graphs_;  ///< Declared after cache_: destroyed before the pools it captured.
  Sampler sampler_;
};

/// Parses "cpu", "cuda", "cuda:N" or "mps" and checks this libtorch build supports it.
at::Device parse_device(const std::string& name);

}  // namespace izwi
