#include "executor/executor_factory.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "common/json_fields.h"
#include "executor/torch_executor.h"
#include "io/hf_config.h"
#include "izwi/config.h"
#include "models/model_registry.h"

namespace izwi {

namespace {

// EOS ids from config.json, extended by generation_config.json when the folder has one.
std::vector<int32_t> collect_eos_ids(const std::string& model_dir, std::vector<int32_t> ids) {
  const std::string path = (std::filesystem::path(model_dir) / "generation_config.json").string();
  if (std::filesystem::exists(path)) {
    const nlohmann::json doc = read_json_file(path);
    for (int32_t id : read_token_ids(JsonFields(doc, path), "eos_token_id")) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  return ids;
}

}  // namespace

LoadedExecutor make_executor(const std::string& model_dir, const EngineConfig& config) {
  LoadedExecutor loaded;
  loaded.backend = std::make_shared<const Backend>(BackendOptions::from_config(config));
  ModelLoadOptions load_options;
  load_options.check_finite = config.check_weights_finite;
  load_options.on_progress = config.on_load_progress;
  std::unique_ptr<CausalLM> model = load_causal_lm(model_dir, loaded.backend, load_options);
  loaded.eos_token_ids = collect_eos_ids(model_dir, model->spec().eos_token_ids);
  loaded.executor = std::make_unique<TorchExecutor>(std::move(model), loaded.backend);
  return loaded;
}

}  // namespace izwi
