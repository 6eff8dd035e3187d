#include "models/model_registry.h"

#include <fmt/ranges.h>

#include <functional>
#include <map>

#include "common/check.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "models/lfm2.h"
#include "models/llama.h"

namespace izwi {

namespace {

using Factory = std::function<std::unique_ptr<CausalLM>(const HfConfig&, WeightLoader&)>;

// Every architecture is listed here explicitly (no static self-registration a linker could drop).
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"llama", [](const HfConfig& c, WeightLoader& w) { return std::make_unique<LlamaForCausalLM>(c, w, false); }},
      {"qwen3", [](const HfConfig& c, WeightLoader& w) { return std::make_unique<LlamaForCausalLM>(c, w, true); }},
      {"lfm2", [](const HfConfig& c, WeightLoader& w) { return std::make_unique<Lfm2ForCausalLM>(c, w); }},
  };
  return table;
}

}  // namespace

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const auto& [name, factory] : factories()) types.push_back(name);
  return types;
}

std::unique_ptr<CausalLM> load_causal_lm(const std::string& model_dir, at::ScalarType dtype, const at::Device& device) {
  const HfConfig config = HfConfig::load(model_dir);
  const std::string type = config.model_type();
  auto it = factories().find(type);
  if (it == factories().end()) {
    fail(ErrorCode::Unsupported, "{}: model_type '{}' is not supported (supported: {})", config.path(), type,
         fmt::join(supported_model_types(), ", "));
  }
  WeightLoader loader(model_dir, dtype, device);
  std::unique_ptr<CausalLM> model = it->second(config, loader);
  loader.finish();
  return model;
}

}  // namespace izwi
