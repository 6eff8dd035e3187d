#pragma once
// Builds an engine's executor from a model folder and its EngineConfig: the Backend, the model
// loaded for it, and what the engine needs from the folder besides the model, so the engine never
// reaches into io/ or models/.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/model_executor.h"
#include "kernels/backend.h"

namespace izwi {

struct EngineConfig;

struct LoadedExecutor {
  std::shared_ptr<const Backend> backend;   ///< Also held by the executor; the model runs on it.
  std::unique_ptr<ModelExecutor> executor;  ///< Owns the model; no cache allocated yet.
  /// The model's EOS ids: config.json's, extended by generation_config.json's when the folder has one.
  std::vector<int32_t> eos_token_ids;
};

/// Builds the Backend from `config` (its errors name the EngineConfig field), loads the model in
/// `model_dir` for it (config.check_weights_finite, config.on_load_progress) and wraps it in a
/// TorchExecutor.
LoadedExecutor make_executor(const std::string& model_dir, const EngineConfig& config);

}  // namespace izwi
