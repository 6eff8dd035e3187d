#pragma once
// Drives a model through the executor and the cache manager directly (no engine, no
// threads), so parity tests control chunking, batching and prefix reuse exactly.

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/kv_cache_manager.h"
#include "executor/torch_executor.h"

namespace izwi::testing {

struct FeedRequest {
  uint64_t seq = 0;
  const std::vector<int32_t>* tokens = nullptr;  ///< The whole sequence so far.
  int32_t start = 0;                             ///< Positions already fed.
  int32_t count = 0;                             ///< Positions to feed now.
  RequestState* state = nullptr;                 ///< Model state of speech requests (audio in or out).
  SamplingState* sampling = nullptr;             ///< sample(): how to sample after the last position.
};

class ModelRunner {
 public:
  /// `fixture`: a tests/data folder's name, or a model folder's absolute path. `weight_dtype`:
  /// EngineConfig::weight_dtype (int8 / int4 quantize the linear layers at load); `dtype`:
  /// EngineConfig::dtype (the activations').
  ModelRunner(const std::string& fixture, bool fast_kernels, bool prefix_cache = false, int32_t num_blocks = 96,
              int32_t block_size = 16, at::ScalarType kv_dtype = at::kFloat, const std::string& weight_dtype = "auto",
              const std::string& dtype = "float32");

  /// One step over several sequences; returns each request's logits [count, vocab].
  std::vector<at::Tensor> feed(const std::vector<FeedRequest>& requests);
  /// One step through the model's output head; one output per request (each needs `sampling`).
  std::vector<StepOutput> sample(const std::vector<FeedRequest>& requests);
  /// One sequence, one step.
  at::Tensor feed(uint64_t seq, const std::vector<int32_t>& tokens, int32_t start, int32_t count);
  /// Starts `seq` from the longest cached prefix of `tokens`; returns the positions reused.
  int32_t start_with_prefix(uint64_t seq, const std::vector<int32_t>& tokens);
  /// Offers the sequence's full blocks to the prefix cache.
  void commit(uint64_t seq, const std::vector<int32_t>& tokens, int32_t computed);
  void free(uint64_t seq);

  const ModelSpec& spec() const { return executor_->spec(); }
  const CausalLM& model() const { return executor_->model(); }
  const KVCacheManager& cache() const { return cache_; }

 private:
  StepBatch batch_of(const std::vector<FeedRequest>& requests);

  std::unique_ptr<TorchExecutor> executor_;
  KVCacheManager cache_;
  std::set<uint64_t> started_;
  std::map<uint64_t, int32_t> restore_block_;
};

/// Logits of every position for a whole sequence fed as one chunk (teacher forcing).
at::Tensor teacher_forced_logits(ModelRunner& runner, const std::vector<int32_t>& tokens);

}  // namespace izwi::testing
