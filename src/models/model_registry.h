#pragma once
// Maps config.json's model_type to the class that implements it.

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "models/causal_lm.h"

namespace izwi {

/// Builds the model `config` describes, taking its tensors from `source`. Throws Unsupported
/// naming an unknown model_type; the source's errors name bad tensors.
std::unique_ptr<CausalLM> build_causal_lm(const HfConfig& config, WeightSource& source);

/// Loads the model in `model_dir` (config.json + safetensors) and checks that every stored
/// tensor was used. Large matrices are kept in `weight_dtype`, the rest in `compute_dtype`.
/// `options` choose the load-time checks and layouts.
struct PanelKernels;

struct ModelLoadOptions {
  bool check_finite = false;                  ///< scan every tensor for NaN and Inf (WeightSource::set_check_finite)
  const PanelKernels* cpu_kernels = nullptr;  ///< pack linear weights for these CPU kernels (or not: null)
};
std::unique_ptr<CausalLM> load_causal_lm(const std::string& model_dir, at::ScalarType compute_dtype,
                                         at::ScalarType weight_dtype, const at::Device& device,
                                         const ModelLoadOptions& options = {});

/// The model_type values the registry accepts.
std::vector<std::string> supported_model_types();

}  // namespace izwi
