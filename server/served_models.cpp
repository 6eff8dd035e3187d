#include "server/served_models.h"

#include <chrono>

#include "common/check.h"
#include "server/api_error.h"

namespace izwi::server {

const char* model_kind(const ModelInfo& info) {
  if (info.produces_audio) return "speech";
  if (info.accepts_audio && !info.audio_chat) return "transcription";
  return "text";
}

void ServedModels::add(const std::string& name, const std::string& dir, const EngineConfig& config) {
  if (name.empty()) fail(ErrorCode::InvalidArgument, "--model '{}': the name before '=' is empty", dir);
  if (by_name_.count(name) != 0) fail(ErrorCode::InvalidArgument, "--model: '{}' is served twice", name);
  auto model = std::make_unique<ServedModel>();
  model->name = name;
  model->dir = dir;
  model->engine = std::make_unique<Engine>(dir, config);
  model->created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
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
