#pragma once
// Maps config.json's model_type to the class that implements it.

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/causal_lm.h"

namespace izwi {

/// Loads the model in `model_dir`. Throws NotFound/Unsupported naming the folder or model_type,
/// InvalidFormat naming the bad file, field or tensor.
std::unique_ptr<CausalLM> load_causal_lm(const std::string& model_dir, at::ScalarType dtype, const at::Device& device);

/// The model_type values load_causal_lm accepts.
std::vector<std::string> supported_model_types();

}  // namespace izwi
