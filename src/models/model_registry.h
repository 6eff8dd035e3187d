#pragma once
// Maps config.json's model_type to the class that implements it.

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "kernels/backend.h"
#include "models/causal_lm.h"

namespace izwi {

/// Builds the model `config` describes, taking its tensors from `source`. Throws Unsupported
/// naming an unknown model_type; the source's errors name bad tensors.
std::unique_ptr<CausalLM> build_causal_lm(const HfConfig& config, WeightSource& source);

/// Loads the model in `model_dir` (config.json + safetensors) for `backend` and checks that every
/// stored tensor was used: large matrices in the backend's weight_dtype(), the rest in its dtype(),
/// on its device, linear weights packed for its panel_kernels(). The caller keeps `backend` alive
/// as long as the model. `options` choose the load-time checks. Sets the spec's weight_bytes.
struct ModelLoadOptions {
  bool check_finite = false;  ///< scan every tensor for NaN and Inf (WeightSource::set_check_finite)
  std::function<void(int64_t, int64_t)> on_progress;  ///< WeightLoader::set_progress
};
std::unique_ptr<CausalLM> load_causal_lm(const std::string& model_dir, std::shared_ptr<const Backend> backend,
                                         const ModelLoadOptions& options = {});

/// The model_type values the registry accepts.
std::vector<std::string> supported_model_types();

}  // namespace izwi
