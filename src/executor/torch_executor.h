#pragma once
// ModelExecutor on libtorch, parameterised by device (CPU, CUDA, MPS) and compute dtype.

#include <ATen/ATen.h>

#include <memory>

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
};

class TorchExecutor final : public ModelExecutor {
 public:
  TorchExecutor(std::unique_ptr<CausalLM> model, const TorchExecutorOptions& options);

  const ModelSpec& spec() const override { return model_->spec(); }
  const CausalLM& model() const override { return *model_; }
  void allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) override;
  std::vector<StepOutput> execute(const StepBatch& batch) override;
  at::Tensor execute_logits(const StepBatch& batch) override;

 private:
  ForwardContext prepare(const StepBatch& batch);

  std::unique_ptr<CausalLM> model_;
  TorchExecutorOptions options_;
  KernelBackend backend_;  ///< chosen once from the device and options_.fast_kernels
  std::unique_ptr<CacheBuffers> cache_;
  Sampler sampler_;
};

/// Parses "cpu", "cuda", "cuda:N" or "mps" and checks this libtorch build supports it.
at::Device parse_device(const std::string& name);

}  // namespace izwi
