#include "server/served_models.h"

#include <chrono>

#include "common/check.h"
#include "server/api_error.h"
#include "server/server_log.h"

namespace izwi::server {

namespace {

constexpr double kMiB = 1 << 20;

/// The routes that serve a model of `kind` (a model_kind value).
const char* routes_for(const std::string& kind) {
  if (kind == "speech") return "/v1/audio/speech";
  if (kind == "transcription") return "/v1/audio/transcriptions or the realtime WebSocket (/v1/realtime)";
  return "/v1/completions or /v1/chat/completions";
}

}  // namespace

const char* model_kind(const ModelInfo& info) {
  if (info.produces_audio) return "speech";
  if (info.accepts_audio && !info.audio_chat) return "transcription";
  return "text";
}

void require_kind(const ServedModel& model, const std::string& kind, const char* route, const std::string& param) {
  const ModelInfo& info = model.engine->model_info();
  const std::string actual = model_kind(info);
  if (actual == kind) return;
  bad_param(param, "{} serves {} models; '{}' is {}: use {}", route, kind, model.name, describe_model_kind(info),
            routes_for(actual));
}

void ServedModels::add(const ModelSpec& spec, const EngineConfig& default_config) {
  const std::string& name = spec.name;
  if (name.empty()) fail(ErrorCode::InvalidArgument, "--model '{}': the name before '=' is empty", spec.dir);
  if (by_name_.count(name) != 0) fail(ErrorCode::InvalidArgument, "--model: '{}' is served twice", name);
  const EngineConfig& config = spec.engine ? *spec.engine : default_config;
  server_log()->info("loading '{}' from {} ({}, {})", name, spec.dir, config.device, config.dtype);
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_unique<ServedModel>();
  model->name = name;
  model->dir = spec.dir;
  model->engine = std::make_unique<Engine>(spec.dir, config);
  model->created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const ModelInfo& info = model->engine->model_info();
  server_log()->info(
      "loaded '{}' in {:.2f} s: {} ({} model), {:.1f} MiB of weights held, {:.1f} MiB read per decode step, KV "
      "pool {} blocks ({:.1f} MiB), process resident {:.1f} MiB",
      name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), info.model_type,
      model_kind(info), info.weight_bytes / kMiB, info.decode_weight_bytes / kMiB, info.kv_cache_blocks,
      info.kv_cache_bytes / kMiB, resident_bytes() / kMiB);
  by_name_[name] = model.get();
  models_.push_back(std::move(model));
}

ServedModel& ServedModels::get(const std::string& name) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    throw ApiError(404, fmt::format("The model '{}' does not exist", name), "model", "model_not_found");
  }
  return *it->second;
}

void ServedModels::shutdown() {
  for (const auto& model : models_) model->engine->shutdown();
}

}  // namespace izwi::server
