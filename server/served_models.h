#pragma once
// The models one server serves: an engine per --model NAME=DIR, looked up by the request's `model`.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "izwi/engine.h"
#include "izwi/tool_calls.h"
#include "server/server_options.h"

namespace izwi::server {

struct ServedModel {
  std::string name;
  std::string dir;
  std::unique_ptr<Engine> engine;
  int64_t created = 0;  ///< Unix time it was loaded (OpenAI's `created`).
  /// How its output's tool calls are parsed (tool_choice auto): --tool-call-parser, else what its
  /// chat template asks for; none when neither tells.
  std::optional<ToolCallFormat> tool_call_format;
};

/// What the model is served for: "speech" (/v1/audio/speech), "transcription"
/// (/v1/audio/transcriptions and the realtime WebSocket) or "text" (the completions routes).
const char* model_kind(const ModelInfo& info);

/// A 400 naming `param` when `model` is not of `kind` (a model_kind value): it says what `route`
/// serves, what the model is and which routes serve it, e.g. "/v1/chat/completions serves text
/// models; 'tts' is a text-to-speech model: use /v1/audio/speech".
void require_kind(const ServedModel& model, const std::string& kind, const char* route,
                  const std::string& param = "model");

class ServedModels {
 public:
  /// Loads spec.dir as spec.name with spec.engine, else `default_config`, and logs the load (its
  /// size and time). izwi::Error naming the folder when it does not load; InvalidArgument for a
  /// name served twice.
  void add(const ModelSpec& spec, const EngineConfig& default_config);
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
