#pragma once
// /v1/audio/voices: a multipart upload of reference speech to a cloned voice (Engine::create_voice
// on a model with ModelInfo::clones_voices), the voice objects the routes answer with, and the
// stored voice a speech request names.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "izwi/voice.h"
#include "server/audio_endpoints.h"
#include "server/served_models.h"
#include "server/server_options.h"
#include "server/voice_store.h"

namespace izwi::server {

struct CreateVoiceJob {
  ServedModel* model = nullptr;
  std::vector<float> samples;  ///< Mono.
  int32_t sample_rate = 0;
  VoiceTranscript transcript;
  std::string name;
};

/// The form's fields: `file` (the reference recording, any format the audio reader takes), `name`,
/// optional `transcript` (in-context cloning) and `model` (default: the only voice-cloning model
/// served). 400 naming the field for a missing, empty, unreadable or too long one, 413 naming
/// `file` for a file over limits.max_upload_bytes.
CreateVoiceJob parse_create_voice_request(const std::vector<FormField>& fields, const ServedModels& models,
                                          const VoiceLimits& limits);

/// job.model's Engine::create_voice on the calling thread; its errors as 400s naming `file` or
/// `transcript`.
Voice create_voice(const CreateVoiceJob& job);

/// OpenAI-style object: {id, object: "audio.voice", name, model, created_at}.
nlohmann::json voice_json(const StoredVoice& voice);

/// The stored voice `voice` names for a speech request to `model`: nullptr when `voice` is not a
/// voice id (a speaker name or an OpenAI voice the model ignores), 400 naming `voice` when it is an
/// id that no stored voice has or a voice made with another model.
std::shared_ptr<const StoredVoice> voice_for_speech(const std::string& voice, const ServedModel& model,
                                                    const VoiceStore& voices);

}  // namespace izwi::server
