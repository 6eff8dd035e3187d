#include "common/engine_options.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>

#include "common/progress_bar.h"
#include "izwi/errors.h"

namespace izwi::cli {

namespace {

// Longer than any model's context (a day of audio at 80 ms a position): a request beyond it is
// refused by the library, which names the field (e.g. --delay-tokens 2e9), so the pool keeps its
// default size rather than failing to allocate first.
constexpr int64_t kMaxSizedRequestPositions = int64_t{1} << 20;

/// True when the --config file sizes the KV pool itself.
bool config_sizes_pool(const std::string& path) {
  if (path.empty()) return false;
  std::ifstream in(path);
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);  // from_json_file checked it
  return json.is_object() && (json.contains("num_kv_blocks") || json.contains("kv_cache_memory_fraction"));
}

/// The folder's own name: "tests/data/llama-tiny/" -> "llama-tiny".
std::string folder_name(const std::string& model_dir) {
  std::string dir = model_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.find_last_of('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

/// What `info` is for, by the ModelUse of the tools that serve it.
ModelUse use_of(const ModelInfo& info) {
  if (info.produces_audio) return ModelUse::Speech;
  if (info.audio_chat) return ModelUse::AudioChat;
  if (info.accepts_audio) return ModelUse::Transcription;
  return ModelUse::Text;
}

/// The tools (and izwi-server routes) that serve a model of `use`.
const char* served_by(ModelUse use) {
  switch (use) {
    case ModelUse::Text:
      return "izwi-generate or izwi-chat (or /v1/completions, /v1/chat/completions)";
    case ModelUse::Speech:
      return "izwi-speak (or /v1/audio/speech)";
    case ModelUse::Transcription:
      return "izwi-transcribe or izwi-stream-transcribe (or /v1/audio/transcriptions, /v1/realtime)";
    case ModelUse::AudioChat:
      return "izwi-audio-chat";
  }
  return "";
}

}  // namespace

int64_t audio_positions(double seconds) { return static_cast<int64_t>(std::ceil(seconds / 0.08)); }

void apply_shared_engine_options(const SharedOptions& o, EngineConfig& config) {
  if (!o.device.empty()) config.device = o.device;
  if (!o.dtype.empty()) config.dtype = o.dtype;
  if (!o.weight_dtype.empty()) config.weight_dtype = o.weight_dtype;
  if (o.threads) config.num_threads = *o.threads;
  if (const std::string level = o.log_level(); !level.empty()) config.log_level = level;
}

EngineConfig engine_config(const SharedOptions& o, const std::vector<int64_t>& request_positions) {
  EngineConfig config = o.config_file.empty() ? EngineConfig{} : EngineConfig::from_json_file(o.config_file);
  apply_shared_engine_options(o, config);
  if (o.kv_blocks) {
    config.num_kv_blocks = *o.kv_blocks;
    config.kv_cache_memory_fraction = 0;
  } else if (!request_positions.empty() && !config_sizes_pool(o.config_file) && config.block_size > 0 &&
             *std::max_element(request_positions.begin(), request_positions.end()) <= kMaxSizedRequestPositions) {
    int64_t blocks = 0;
    for (const int64_t positions : request_positions) blocks += (positions + config.block_size - 1) / config.block_size;
    config.kv_cache_memory_fraction = 0;
    // EngineConfig::validate names the field when a request is too long for any pool.
    config.num_kv_blocks = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(blocks, 1), INT32_MAX));
  }
  return config;
}

void require_model_use(const ModelInfo& info, const std::string& model_dir, ModelUse use) {
  const ModelUse actual = use_of(info);
  // An audio chat model's language model also generates text from text.
  if (actual == use || (use == ModelUse::Text && actual == ModelUse::AudioChat)) return;
  throw Error(ErrorCode::Unsupported,
              "'" + folder_name(model_dir) + "' is " + describe_model_kind(info) + ": use " + served_by(actual));
}

std::unique_ptr<Engine> load_engine(const SharedOptions& options, EngineConfig config, ModelUse use) {
  ProgressBar bar("loading " + folder_name(options.model), ProgressBar::wanted(options.json));
  config.on_load_progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
  auto engine = std::make_unique<Engine>(options.model, config);
  require_model_use(engine->model_info(), options.model, use);
  return engine;
}

}  // namespace izwi::cli
