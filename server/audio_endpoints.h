#pragma once
// POST /v1/audio/speech and /v1/audio/transcriptions: OpenAI's fields to izwi requests, and the
// transcription response shapes.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "izwi/audio.h"
#include "izwi/output.h"
#include "izwi/speech.h"
#include "izwi/transcription.h"
#include "server/audio_encoding.h"
#include "server/served_models.h"

namespace izwi::server {

enum class SpeechStreamFormat { None, Audio, Sse };

struct SpeechJob {
  ServedModel* model = nullptr;
  SpeechRequest request;
  AudioFormat format = AudioFormat::Wav;
  SpeechStreamFormat stream = SpeechStreamFormat::None;
};

/// OpenAI's fields (model, input, voice, instructions, response_format, speed, stream_format) plus
/// izwi's extensions: temperature (both heads; 0 = greedy), seed, max_frames.
SpeechJob parse_speech_request(const nlohmann::json& body, const ServedModels& models);

struct TranscriptionJob {
  ServedModel* model = nullptr;
  std::vector<float> samples;  ///< Mono.
  int32_t sample_rate = 0;
  TranscriptionOptions options;
  std::string response_format = "json";  ///< json, text or verbose_json
  bool stream = false;
};

/// A multipart form's fields: `file` (any format the audio reader takes), `model`,
/// `response_format`, `stream`, `temperature`, `language` (accepted; the model detects it).
struct FormField {
  std::string name, filename, content;
};

/// A form's text fields by name (the last of a repeated name) and its `file` part; 400 naming the
/// field when a name or value is not UTF-8 (they may be echoed in an error or a response).
struct FormValues {
  std::map<std::string, std::string> text;
  const FormField* file = nullptr;  ///< Points into the fields; nullptr when there is none.
  std::optional<std::string> get(const std::string& name) const;
};
FormValues form_values(const std::vector<FormField>& fields);

/// The `file` part's audio, decoded; 400 naming `file` when it cannot be read.
AudioBuffer decode_file_part(const FormField& file);

TranscriptionJob parse_transcription_request(const std::vector<FormField>& fields, const ServedModels& models);

/// The answer body for response_format json / verbose_json (text is served as text/plain).
nlohmann::json transcription_response(const TranscriptionJob& job, const Output& output);

}  // namespace izwi::server
