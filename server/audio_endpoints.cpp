#include "server/audio_endpoints.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "server/api_error.h"
#include "server/json_fields.h"
#include "tokenizer/utf8.h"

namespace izwi::server {

namespace {

constexpr size_t kMaxInputChars = 4096;  // OpenAI's limit for `input`

}  // namespace

SpeechJob parse_speech_request(const nlohmann::json& body, const ServedModels& models) {
  SpeechJob job;
  job.model = &models.get(required_string(body, "model"));
  const ModelInfo& info = job.model->engine->model_info();
  require_kind(*job.model, "speech", "/v1/audio/speech");
  job.request.text = required_string(body, "input");
  if (job.request.text.empty()) bad_param("input", "'input' must not be empty");
  if (job.request.text.size() > kMaxInputChars) {
    bad_param("input", "'input' holds {} bytes; at most {}", job.request.text.size(), kMaxInputChars);
  }
  if (job.model->engine->tokenizer() == nullptr) {
    bad_param("model", "the model '{}' has no tokenizer for the input text", job.model->name);
  }
  // A model with named speakers needs one of them; one without (VoiceDesign, Base) takes its voice
  // from `instructions` or its default, and ignores the name.
  const std::string voice = string_field(body, "voice").value_or("");
  if (!info.speakers.empty()) {
    const auto it = std::find(info.speakers.begin(), info.speakers.end(), voice);
    if (it == info.speakers.end()) {
      bad_param("voice", "'voice' = '{}' is not one of this model's voices: {}", voice, fmt::join(info.speakers, ", "));
    }
    job.request.speaker = voice;
  }
  job.request.instruct = string_field(body, "instructions").value_or("");
  if (const auto speed = number_field(body, "speed", 0.25, 4.0); speed && *speed != 1.0) {
    bad_param("speed", "'speed' = {} is not supported (only 1)", *speed);
  }
  job.format = parse_audio_format(string_field(body, "response_format").value_or("wav"));
  const std::string stream = string_field(body, "stream_format").value_or("");
  if (stream == "audio") {
    job.stream = SpeechStreamFormat::Audio;
  } else if (stream == "sse") {
    job.stream = SpeechStreamFormat::Sse;
  } else if (!stream.empty()) {
    bad_param("stream_format", "'stream_format' = '{}' must be audio or sse", stream);
  }
  if (job.stream != SpeechStreamFormat::None && job.format == AudioFormat::Flac) {
    bad_param("response_format", "flac cannot be streamed; use wav or pcm");
  }
  SpeechParams& p = job.request.params;
  if (const auto temperature = number_field(body, "temperature", 0.0, 2.0)) {
    p.sampling.temperature = static_cast<float>(*temperature);
    p.codebook_sampling.temperature = p.sampling.temperature;
  }
  if (const auto seed = integer_field(body, "seed", 0, INT64_MAX)) p.seed = static_cast<uint64_t>(*seed);
  if (const auto frames = integer_field(body, "max_frames", 1, 1 << 16)) p.max_frames = static_cast<int32_t>(*frames);
  return job;
}

std::optional<std::string> FormValues::get(const std::string& name) const {
  const auto it = text.find(name);
  if (it == text.end()) return std::nullopt;
  return it->second;
}

FormValues form_values(const std::vector<FormField>& fields) {
  FormValues form;
  for (const FormField& field : fields) {
    if (utf8::first_invalid(field.name)) bad_param("", "a multipart field's name is not valid UTF-8");
    if (field.name == "file") {
      if (utf8::first_invalid(field.filename)) bad_param("file", "the file name of 'file' is not valid UTF-8");
      form.file = &field;
    } else {
      if (const auto bad = utf8::first_invalid(field.content)) {
        bad_param(field.name, "'{}' is not valid UTF-8 (byte {})", field.name, *bad);
      }
      form.text[field.name] = field.content;
    }
  }
  return form;
}

AudioBuffer decode_file_part(const FormField& file) {
  try {
    return read_audio_from_memory(file.content.data(), file.content.size(),
                                  file.filename.empty() ? "file" : file.filename);
  } catch (const Error& e) {
    bad_param("file", "{}", e.what());
  }
}

TranscriptionJob parse_transcription_request(const std::vector<FormField>& fields, const ServedModels& models) {
  TranscriptionJob job;
  const FormValues form = form_values(fields);
  const auto text = [&](const char* name) { return form.get(name); };
  const std::optional<std::string> model = text("model");
  if (!model) bad_param("model", "'model' is required");
  job.model = &models.get(*model);
  require_kind(*job.model, "transcription", "/v1/audio/transcriptions");
  if (form.file == nullptr) bad_param("file", "'file' is required (a multipart upload)");
  const AudioBuffer audio = decode_file_part(*form.file);
  job.samples = to_mono(audio);
  job.sample_rate = audio.sample_rate;
  job.response_format = text("response_format").value_or("json");
  if (job.response_format != "json" && job.response_format != "text" && job.response_format != "verbose_json") {
    bad_param("response_format", "'response_format' = '{}' must be json, text or verbose_json", job.response_format);
  }
  const std::string stream = text("stream").value_or("false");
  if (stream != "true" && stream != "false") bad_param("stream", "'stream' must be true or false");
  job.stream = stream == "true";
  if (const std::optional<std::string> temperature = text("temperature")) {
    char* end = nullptr;
    const double t = std::strtod(temperature->c_str(), &end);
    if (end == temperature->c_str() || *end != '\0' || !(t >= 0.0 && t <= 2.0)) {
      bad_param("temperature", "'temperature' must be a number in [0, 2]");
    }
    job.options.sampling.temperature = static_cast<float>(t);
  }
  // A whole file: decode until the model ends the text after the audio.
  job.options.continue_after_audio = true;
  return job;
}

nlohmann::json transcription_response(const TranscriptionJob& job, const Output& output) {
  if (job.response_format != "verbose_json") return {{"text", output.text}};
  const double duration = static_cast<double>(job.samples.size()) / job.sample_rate;
  const float temperature = job.options.sampling.temperature.value_or(
      job.model->engine->model_info().default_sampling.temperature.value_or(0.0f));
  return {{"task", "transcribe"},
          {"language", "auto"},
          {"duration", duration},
          {"text", output.text},
          {"segments", nlohmann::json::array({{{"id", 0},
                                               {"seek", 0},
                                               {"start", 0.0},
                                               {"end", duration},
                                               {"text", output.text},
                                               {"tokens", output.tokens},
                                               {"temperature", temperature}}})}};
}

}  // namespace izwi::server
