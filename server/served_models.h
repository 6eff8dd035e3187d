#pragma once
// The models one server serves: an engine per NAME=DIR, looked up by the request's `model`.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "izwi/engine.h"

namespace izwi::server {

struct ServedModel {
  std::string name;
  std::string dir;
  std::unique_ptr<Engine> engine;
  int64_t created = 0;  ///< Unix time it was loaded (OpenAI's `created`).
};

/// What the model is served for: "speech" (/v1/audio/speech), "transcription"
/// (/v1/audio/transcriptions and the realtime WebSocket) or "text" (the completions routes).
const char* model_kind(const ModelInfo& info);

class ServedModels {
 public:
  /// Loads DIR as NAME (izwi::Error naming the folder when it does not load; InvalidArgument for
  /// a name served twice).
  void add(const std::string& name, const std::string& dir, const EngineConfig& config);
  /// 404 (ApiError) naming the model when it is not served.
  ServedModel& get(const std::string& name) const;
  const std::vector<std::unique_ptr<ServedModel>>& all() const { return models_; }
  /// Stops every engine: their live requests end with FinishReason::Abort.
  void shutdown();

 private:
  std::vector<std::unique_ptr<ServedModel>> models_;
  std::map<std::string, ServedModel*> by_name_;
};

}  // namespace izwi::server
