#include "models/model_registry.h"

#include <fmt/ranges.h>

#include <functional>
#include <map>

#include "common/check.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "models/lfm2.h"
#include "models/lfm2_audio/lfm2_audio.h"
#include "models/llama.h"
#include "models/qwen3_tts/qwen3_tts.h"
#include "models/voxtral_realtime.h"

namespace izwi {

namespace {

using Factory = std::function<std::unique_ptr<CausalLM>(const HfConfig&, WeightSource&)>;

// Every architecture is listed here explicitly (no static self-registration a linker could drop).
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"llama", [](const HfConfig& c, WeightSource& w) { return std::make_unique<LlamaForCausalLM>(c, w, false); }},
      {"qwen3", [](const HfConfig& c, WeightSource& w) { return std::make_unique<LlamaForCausalLM>(c, w, true); }},
      {"qwen3_tts",
       [](const HfConfig& c, WeightSource& w) { return std::make_unique<Qwen3TtsForConditionalGeneration>(c, w); }},
      {"lfm2", [](const HfConfig& c, WeightSource& w) { return std::make_unique<Lfm2ForCausalLM>(c, w); }},
      {"lfm2_audio",
       [](const HfConfig& c, WeightSource& w) { return std::make_unique<Lfm2AudioForConditionalGeneration>(c, w); }},
      {"voxtral_realtime",
       [](const HfConfig& c, WeightSource& w) {
         return std::make_unique<VoxtralRealtimeForConditionalGeneration>(c, w);
       }},
  };
  return table;
}

const Factory& factory_for(const HfConfig& config) {
  const std::string type = config.model_type();
  auto it = factories().find(type);
  if (it == factories().end()) {
    fail(ErrorCode::Unsupported, "{}: model_type '{}' is not supported (supported: {})", config.path(), type,
         fmt::join(supported_model_types(), ", "));
  }
  return it->second;
}

}  // namespace

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const auto& [name, factory] : factories()) types.push_back(name);
  return types;
}

std::unique_ptr<CausalLM> build_causal_lm(const HfConfig& config, WeightSource& source) {
  return factory_for(config)(config, source);
}

std::unique_ptr<CausalLM> load_causal_lm(const std::string& model_dir, std::shared_ptr<const Backend> backend,
                                         const ModelLoadOptions& options) {
  const HfConfig config = HfConfig::load(model_dir);
  const Factory& factory = factory_for(config);  // unknown types fail before the weights are opened
  WeightLoader loader(model_dir, backend->dtype(), backend->weight_dtype(), backend->device());
  loader.set_check_finite(options.check_finite);
  loader.set_backend(*backend);
  loader.set_keep_bf16(backend->keeps_bf16_weights());
  loader.set_progress(options.on_progress);
  const ResidentWeightBytes held;  // the model's weights, and those its parts load from other files
  std::unique_ptr<CausalLM> model = factory(config, loader);
  loader.finish();
  model->set_weight_bytes(held.bytes());
  return model;
}

}  // namespace izwi
