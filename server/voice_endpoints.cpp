#include "server/voice_endpoints.h"

#include <fmt/format.h>

#include "izwi/audio.h"
#include "izwi/errors.h"
#include "server/api_error.h"

namespace izwi::server {

namespace {

constexpr double kMiB = 1 << 20;

/// The model the form names, else the only voice-cloning one served; 400 naming `model` otherwise.
ServedModel& voice_model(const std::optional<std::string>& name, const ServedModels& models) {
  if (name) {
    ServedModel& model = models.get(*name);
    if (!model.engine->model_info().clones_voices) {
      bad_param("model", "'{}' is not a voice-cloning model ({}); Qwen3-TTS Base models clone voices", model.name,
                describe_model_kind(model.engine->model_info()));
    }
    return model;
  }
  std::vector<ServedModel*> cloning;
  for (const auto& model : models.all()) {
    if (model->engine->model_info().clones_voices) cloning.push_back(model.get());
  }
  if (cloning.size() == 1) return *cloning.front();
  if (cloning.empty()) bad_param("model", "no served model clones voices (Qwen3-TTS Base models do)");
  bad_param("model", "'model' is required: {} served models clone voices", cloning.size());
}

}  // namespace

CreateVoiceJob parse_create_voice_request(const std::vector<FormField>& fields, const ServedModels& models,
                                          const VoiceLimits& limits) {
  CreateVoiceJob job;
  const FormValues form = form_values(fields);
  job.model = &voice_model(form.get("model"), models);
  const std::optional<std::string> name = form.get("name");
  if (!name || name->empty()) bad_param("name", "'name' is required (the voice's name)");
  if (name->size() > limits.max_name_bytes) {
    bad_param("name", "'name' holds {} bytes; at most {}", name->size(), limits.max_name_bytes);
  }
  job.name = *name;
  job.transcript.text = form.get("transcript").value_or("");
  if (job.transcript.text.size() > limits.max_transcript_bytes) {
    bad_param("transcript", "'transcript' holds {} bytes; at most {}", job.transcript.text.size(),
              limits.max_transcript_bytes);
  }
  if (!job.transcript.empty() && job.model->engine->tokenizer() == nullptr) {
    bad_param("transcript", "the model '{}' has no tokenizer for the transcript", job.model->name);
  }
  if (form.file == nullptr) bad_param("file", "'file' is required (a multipart upload of the reference recording)");
  const FormField& file = *form.file;
  if (file.content.empty()) bad_param("file", "'file' is empty");
  if (file.content.size() > limits.max_upload_bytes) {
    throw ApiError(413,
                   fmt::format("'file' holds {:.1f} MiB; a reference recording may hold at most {:.1f} MiB "
                               "(--max-voice-upload-mb)",
                               file.content.size() / kMiB, limits.max_upload_bytes / kMiB),
                   "file", "request_too_large");
  }
  const AudioBuffer audio = decode_file_part(file);
  if (audio.seconds() > limits.max_seconds) {
    bad_param("file", "'file' is {:.1f} s of audio; a reference recording may last at most {:.1f} s", audio.seconds(),
              limits.max_seconds);
  }
  job.samples = to_mono(audio);
  job.sample_rate = audio.sample_rate;
  return job;
}

Voice create_voice(const CreateVoiceJob& job) {
  try {
    return job.model->engine->create_voice(job.samples, job.sample_rate, job.transcript);
  } catch (const Error& e) {
    const ApiError error = from_engine_error(e);
    if (error.status() != 400) throw error;
    // The library's messages name what was wrong: the transcript, or else the recording.
    const bool transcript = std::string(e.what()).find("transcript") != std::string::npos;
    throw ApiError(400, e.what(), transcript ? "transcript" : "file", "invalid_value");
  }
}

nlohmann::json voice_json(const StoredVoice& voice) {
  return {{"id", voice.id},
          {"object", "audio.voice"},
          {"name", voice.name},
          {"model", voice.model},
          {"created_at", voice.created_at}};
}

std::shared_ptr<const StoredVoice> voice_for_speech(const std::string& voice, const ServedModel& model,
                                                    const VoiceStore& voices) {
  // Models with named speakers check `voice` against them; other names are OpenAI voices
  // ("alloy", ...) that a cloning model ignores, as before voices could be created.
  if (!model.engine->model_info().clones_voices || voice.rfind("voice_", 0) != 0) return nullptr;
  std::shared_ptr<const StoredVoice> stored = voices.find(voice);
  if (!stored) {
    bad_param("voice", "'voice' = '{}' is no voice of this server (GET /v1/audio/voices lists them)", voice);
  }
  if (stored->model != model.name) {
    bad_param("voice", "the voice '{}' was made with the model '{}'; this request's model is '{}'", voice,
              stored->model, model.name);
  }
  return stored;
}

}  // namespace izwi::server
