#include "server/chat_audio_endpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <limits>
#include <utility>

#include "common/base64.h"
#include "izwi/audio.h"
#include "izwi/errors.h"
#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/text_endpoints.h"

namespace izwi::server {

namespace {

// liquid-audio's system prompts: chat with a spoken answer (interleaved), and the sequential tasks.
constexpr const char* kInterleavedSystem = "Respond with interleaved text and audio.";
constexpr const char* kAsrSystem = "Perform ASR.";
constexpr const char* kTtsSystem = "Perform TTS.";
constexpr const char* kDefaultVoice = "default";  ///< The one voice the model speaks in when not told.

/// LFM2-Audio's TTS voices: audio.voice and the sentence liquid-audio adds to "Perform TTS.".
constexpr std::pair<const char*, const char*> kTtsVoices[] = {
    {"us_male", "US male"}, {"us_female", "US female"}, {"uk_male", "UK male"}, {"uk_female", "UK female"}};

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string next_chat_id() {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("chatcmpl-izwi-audio{}", ++counter);
}

std::string sse(const nlohmann::json& event) { return "data: " + dump_json(event) + "\n\n"; }

const nlohmann::json* find(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

/// The string at object[key], `param` naming it: 400 when missing or not a string.
std::string required_string_at(const nlohmann::json& object, const char* key, const std::string& param) {
  const nlohmann::json* value = find(object, key);
  if (value == nullptr || !value->is_string()) bad_param(param, "'{}' must be a string", param);
  return value->get<std::string>();
}

bool is_part_of_type(const nlohmann::json& part, const char* type) {
  const nlohmann::json* t = find(part, "type");
  return t != nullptr && t->is_string() && *t == type;
}

/// The (i, j) of every input_audio part in the messages.
std::vector<std::pair<size_t, size_t>> input_audio_parts(const nlohmann::json& messages) {
  std::vector<std::pair<size_t, size_t>> found;
  if (!messages.is_array()) return found;
  for (size_t i = 0; i < messages.size(); ++i) {
    const nlohmann::json* content = find(messages[i], "content");
    if (content == nullptr || !content->is_array()) continue;
    for (size_t j = 0; j < content->size(); ++j) {
      if (is_part_of_type((*content)[j], "input_audio")) found.emplace_back(i, j);
    }
  }
  return found;
}

bool modalities_hold_audio(const nlohmann::json& body) {
  const nlohmann::json* modalities = find(body, "modalities");
  if (modalities == nullptr || !modalities->is_array()) return false;
  for (const nlohmann::json& m : *modalities) {
    if (m == "audio") return true;
  }
  return false;
}

/// The first assistant message that gives an earlier answer back by `audio`; -1 when none.
int64_t first_audio_reply(const nlohmann::json& messages) {
  if (!messages.is_array()) return -1;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (find(messages[i], "audio") != nullptr) return static_cast<int64_t>(i);
  }
  return -1;
}

/// A 400 for a request the model cannot serve: the first part or field that needs audio.
void require_audio_chat(const nlohmann::json& body, const ServedModel& model) {
  const ModelInfo& info = model.engine->model_info();
  if (info.audio_chat) return;
  const std::string kind = describe_model_kind(info);
  const nlohmann::json* messages = find(body, "messages");
  if (messages != nullptr) {
    const auto parts = input_audio_parts(*messages);
    if (!parts.empty()) {
      const std::string param = fmt::format("messages[{}].content[{}]", parts[0].first, parts[0].second);
      bad_param(param, "'{}' is an input_audio part; '{}' is {} and takes no audio: use an audio chat model", param,
                model.name, kind);
    }
    if (const int64_t i = first_audio_reply(*messages); i >= 0) {
      const std::string param = fmt::format("messages[{}].audio", i);
      bad_param(param, "'{}' gives back a speech answer; '{}' is {} and gives none: use an audio chat model", param,
                model.name, kind);
    }
  }
  if (!modalities_hold_audio(body)) {
    bad_param("audio", "'audio' asks for a spoken answer; '{}' is {} and answers in text only: use an audio chat model",
              model.name, kind);
  }
  bad_param("modalities", "'modalities' holds \"audio\"; '{}' is {} and answers in text only: use an audio chat model",
            model.name, kind);
}

/// An input_audio part's samples: `{data: base64, format}` (wav, mp3, flac, ogg as files; pcm16 as
/// 16-bit little-endian mono at `sample_rate`, 24 kHz when absent).
AudioChatPart input_audio(const nlohmann::json& part, const std::string& param) {
  const std::string audio_param = param + ".input_audio";
  const nlohmann::json* audio = find(part, "input_audio");
  if (audio == nullptr || !audio->is_object()) {
    bad_param(audio_param, "'{}' must be an object {{data, format}}", audio_param);
  }
  const std::string data_param = audio_param + ".data", format_param = audio_param + ".format";
  const std::string data = required_string_at(*audio, "data", data_param);
  const std::string format = required_string_at(*audio, "format", format_param);
  if (format != "wav" && format != "mp3" && format != "flac" && format != "ogg" && format != "pcm16") {
    bad_param(format_param, "'{}' = '{}' must be wav, mp3, flac, ogg or pcm16", format_param, format);
  }
  const std::optional<std::string> bytes = base64_decode(data);
  if (!bytes) bad_param(data_param, "'{}' is not valid base64", data_param);
  if (bytes->empty()) bad_param(data_param, "'{}' holds no audio", data_param);
  AudioChatPart out;
  if (format == "pcm16") {
    const std::string rate_param = audio_param + ".sample_rate";
    out.sample_rate = kDefaultPcm16Rate;
    if (const nlohmann::json* rate = find(*audio, "sample_rate")) {
      if (!rate->is_number_integer() || rate->get<int64_t>() < 8000 || rate->get<int64_t>() > 192000) {
        bad_param(rate_param, "'{}' must be an integer in [8000, 192000]", rate_param);
      }
      out.sample_rate = static_cast<int32_t>(rate->get<int64_t>());
    }
    if (bytes->size() % 2 != 0) {
      bad_param(data_param, "'{}' holds {} bytes: pcm16 is 2 bytes a sample", data_param, bytes->size());
    }
    out.audio.resize(bytes->size() / 2);
    for (size_t s = 0; s < out.audio.size(); ++s) {
      const auto lo = static_cast<uint16_t>(static_cast<unsigned char>((*bytes)[2 * s]));
      const auto hi = static_cast<uint16_t>(static_cast<unsigned char>((*bytes)[2 * s + 1]));
      out.audio[s] = static_cast<float>(static_cast<int16_t>(lo | (hi << 8))) / 32768.0f;
    }
    return out;
  }
  try {
    const AudioBuffer decoded = read_audio_from_memory(bytes->data(), bytes->size(), data_param);
    out.audio = to_mono(decoded);
    out.sample_rate = decoded.sample_rate;
  } catch (const Error& e) {
    bad_param(data_param, "'{}' is not readable {} audio: {}", data_param, format, e.what());
  }
  return out;
}

struct Turn {
  std::string role;
  std::vector<AudioChatPart> parts;
  std::vector<size_t> part_index;  ///< Each part's index in the message's content (for errors).
};

Turn parse_turn(const nlohmann::json& message, size_t i, const ServedModel& model, const AudioAnswerStore& answers) {
  if (!message.is_object()) bad_param(fmt::format("messages[{}]", i), "'messages[{}]' must be an object", i);
  Turn turn;
  const std::string role_param = fmt::format("messages[{}].role", i);
  turn.role = required_string_at(message, "role", role_param);
  if (turn.role == "developer") turn.role = "system";  // OpenAI's newer name for the system role
  if (turn.role != "system" && turn.role != "user" && turn.role != "assistant") {
    bad_param(role_param, "'{}' = '{}': audio chat takes system, developer, user and assistant messages", role_param,
              turn.role);
  }
  if (const nlohmann::json* audio = find(message, "audio")) {
    const std::string audio_param = fmt::format("messages[{}].audio", i);
    if (turn.role != "assistant") bad_param(audio_param, "'{}': only assistant messages give back audio", audio_param);
    const std::string id = required_string_at(*audio, "id", audio_param + ".id");
    const auto stored = answers.find(id, unix_now());
    if (!stored) {
      bad_param(audio_param + ".id", "'{}.id' = '{}': no answer has this id (answers are kept {} s, the latest {})",
                audio_param, id, answers.ttl_seconds(), answers.max_answers());
    }
    if (stored->model != model.name) {
      bad_param(audio_param + ".id", "'{}.id' = '{}' was spoken by '{}', not '{}'", audio_param, id, stored->model,
                model.name);
    }
    turn.parts = stored->message.parts;  // the answer's text ids and frames, in generation order
    turn.part_index.assign(turn.parts.size(), 0);
    return turn;
  }
  const std::string content_param = fmt::format("messages[{}].content", i);
  const nlohmann::json* content = find(message, "content");
  if (content == nullptr) return turn;
  if (content->is_string()) {
    if (content->get<std::string>().empty()) return turn;
    turn.parts.push_back({content->get<std::string>(), {}, {}, 0, {}});
    turn.part_index.push_back(0);
    return turn;
  }
  if (!content->is_array()) bad_param(content_param, "'{}' must be a string or an array of parts", content_param);
  for (size_t j = 0; j < content->size(); ++j) {
    const nlohmann::json& part = (*content)[j];
    const std::string part_param = fmt::format("{}[{}]", content_param, j);
    if (is_part_of_type(part, "text")) {
      const std::string text = required_string_at(part, "text", part_param + ".text");
      if (text.empty()) continue;
      turn.parts.push_back({text, {}, {}, 0, {}});
    } else if (is_part_of_type(part, "input_audio")) {
      if (turn.role != "user") bad_param(part_param, "'{}': input_audio parts go in user messages", part_param);
      turn.parts.push_back(input_audio(part, part_param));
    } else {
      bad_param(part_param, "'{}' must be a text or input_audio part", part_param);
    }
    turn.part_index.push_back(j);
  }
  return turn;
}

/// The last (user) turn as the request's audio then text, LFM2-Audio's order for the turn it answers.
void set_user_turn(const Turn& turn, size_t i, AudioChatRequest& request) {
  for (size_t p = 0; p < turn.parts.size(); ++p) {
    const AudioChatPart& part = turn.parts[p];
    const std::string param = fmt::format("messages[{}].content[{}]", i, turn.part_index[p]);
    if (part.audio.empty()) {
      request.text += part.text;
      continue;
    }
    if (!request.audio.empty() || !request.text.empty()) {
      bad_param(param,
                "'{}': the last user message takes one input_audio part, before its text (the order LFM2-Audio's "
                "prompt has); give earlier audio in earlier messages",
                param);
    }
    request.audio = part.audio;
    request.sample_rate = part.sample_rate;
  }
}

bool parse_modalities(const nlohmann::json& body) {
  const nlohmann::json* modalities = find(body, "modalities");
  if (modalities == nullptr) return false;
  bool text = false, audio = false;
  if (modalities->is_array()) {
    for (const nlohmann::json& m : *modalities) {
      if (m == "text") {
        text = true;
      } else if (m == "audio") {
        audio = true;
      } else {
        text = false;
        break;
      }
    }
  }
  if (!text) bad_param("modalities", "'modalities' must be [\"text\"] or [\"text\", \"audio\"]");
  return audio;
}

AudioFormat parse_output_format(const nlohmann::json& audio, bool stream) {
  const nlohmann::json* format = find(audio, "format");
  if (format == nullptr) return stream ? AudioFormat::Pcm : AudioFormat::Wav;
  if (!format->is_string()) bad_param("audio.format", "'audio.format' must be a string");
  const std::string name = format->get<std::string>();
  AudioFormat out = AudioFormat::Pcm;
  if (name == "wav") {
    out = AudioFormat::Wav;
  } else if (name == "flac") {
    out = AudioFormat::Flac;
  } else if (name == "mp3") {
    out = AudioFormat::Mp3;
  } else if (name == "opus") {
    out = AudioFormat::Opus;
  } else if (name != "pcm16") {
    bad_param("audio.format", "'audio.format' = '{}' is not supported: use wav, flac, mp3, opus or pcm16", name);
  }
  if (stream && out != AudioFormat::Pcm) {
    bad_param("audio.format", "'audio.format' = '{}': a streamed speech answer is pcm16 (as OpenAI's)", name);
  }
  return out;
}

/// audio.voice: "default" (the model's voice), or one of LFM2-Audio's TTS voices, which only a
/// TTS request (system "Perform TTS.") takes: its sentence goes into the system prompt.
void apply_voice(const nlohmann::json& audio, AudioChatRequest& request) {
  const nlohmann::json* voice = find(audio, "voice");
  if (voice == nullptr) return;
  if (!voice->is_string()) bad_param("audio.voice", "'audio.voice' must be a string");
  const std::string name = voice->get<std::string>();
  if (name == kDefaultVoice) return;
  for (const auto& [id, words] : kTtsVoices) {
    if (name != id) continue;
    if (request.system != kTtsSystem) {
      bad_param("audio.voice",
                "'audio.voice' = '{}' is a voice of LFM2-Audio's TTS (system message \"{}\"); chat answers speak in "
                "the model's one voice, '{}'",
                name, kTtsSystem, kDefaultVoice);
    }
    request.system = fmt::format("{} Use the {} voice.", kTtsSystem, words);
    return;
  }
  bad_param("audio.voice",
            "'audio.voice' = '{}' is not a voice of this model: use {}, or us_male, us_female, "
            "uk_male or uk_female with the system message \"{}\"",
            name, kDefaultVoice, kTtsSystem);
}

void reject_unsupported(const nlohmann::json& body) {
  if (const auto n = integer_field(body, "n", 1, 128); n && *n != 1) {
    bad_param("n", "'n' = {}: audio chat returns one choice per request", *n);
  }
  if (bool_field(body, "logprobs").value_or(false)) bad_param("logprobs", "audio chat has no logprobs");
  for (const char* field : {"tools", "stop", "response_format"}) {
    if (find(body, field) != nullptr) bad_param(field, "'{}' is not supported by audio chat", field);
  }
}

void parse_sampling(const nlohmann::json& body, AudioChatRequest& request) {
  // Unset fields take the model's defaults (LFM2-Audio's: greedy), not OpenAI's temperature 1.
  if (const auto t = number_field(body, "temperature", 0.0, 2.0)) request.text_sampling.temperature = *t;
  if (const auto top_p = number_field(body, "top_p", 0.0, 1.0)) {
    if (*top_p == 0.0) bad_param("top_p", "'top_p' must be > 0");
    request.text_sampling.top_p = static_cast<float>(*top_p);
  }
  if (const auto top_k = integer_field(body, "top_k", -1, INT32_MAX)) {
    request.text_sampling.top_k = static_cast<int32_t>(std::max<int64_t>(*top_k, 0));
  }
  // izwi's fields for the audio head.
  if (const auto t = number_field(body, "audio_temperature", 0.0, 2.0)) request.audio_sampling.temperature = *t;
  if (const auto top_k = integer_field(body, "audio_top_k", -1, INT32_MAX)) {
    request.audio_sampling.top_k = static_cast<int32_t>(std::max<int64_t>(*top_k, 0));
  }
  if (const auto seed = integer_field(body, "seed", std::numeric_limits<int64_t>::min(), INT64_MAX)) {
    request.seed = static_cast<uint64_t>(*seed);
  }
  std::optional<int64_t> max_items = integer_field(body, "max_completion_tokens", 1, INT32_MAX);
  if (!max_items) max_items = integer_field(body, "max_tokens", 1, INT32_MAX);
  if (max_items) request.max_items = static_cast<int32_t>(*max_items);
}

}  // namespace

bool is_chat_audio_request(const nlohmann::json& body) {
  const nlohmann::json* messages = find(body, "messages");
  if (modalities_hold_audio(body) || find(body, "audio") != nullptr) return true;
  return messages != nullptr && (!input_audio_parts(*messages).empty() || first_audio_reply(*messages) >= 0);
}

ChatAudioJob parse_chat_audio_request(const nlohmann::json& body, const ServedModels& models,
                                      const AudioAnswerStore& answers) {
  ChatAudioJob job;
  job.model = &models.get(required_string(body, "model"));
  require_audio_chat(body, *job.model);
  const ModelInfo& info = job.model->engine->model_info();
  reject_unsupported(body);
  job.stream = bool_field(body, "stream").value_or(false);
  if (const nlohmann::json* options = find(body, "stream_options")) {
    if (!options->is_object()) bad_param("stream_options", "'stream_options' must be an object");
    job.include_usage = bool_field(*options, "include_usage").value_or(false);
  }
  job.audio_out = parse_modalities(body);
  if (job.audio_out && info.output_sample_rate == 0) {
    bad_param("modalities",
              "'modalities' holds \"audio\"; '{}' has no codec to voice answers (its folder has no "
              "tokenizer-*.safetensors): ask for [\"text\"]",
              job.model->name);
  }
  const nlohmann::json* audio = find(body, "audio");
  if (audio != nullptr && !job.audio_out) bad_param("audio", "'audio' needs 'modalities': [\"text\", \"audio\"]");
  if (audio != nullptr && !audio->is_object()) bad_param("audio", "'audio' must be an object {{voice, format}}");
  if (job.audio_out) job.format = parse_output_format(audio != nullptr ? *audio : nlohmann::json::object(), job.stream);

  const nlohmann::json* messages = find(body, "messages");
  if (messages == nullptr) bad_param("messages", "'messages' is required");
  if (!messages->is_array() || messages->empty()) bad_param("messages", "'messages' must be a non-empty array");
  std::vector<Turn> turns;
  for (size_t i = 0; i < messages->size(); ++i) turns.push_back(parse_turn((*messages)[i], i, *job.model, answers));
  AudioChatRequest& request = job.request;
  size_t first = 0;
  for (; first < turns.size() && turns[first].role == "system"; ++first) {
    for (const AudioChatPart& part : turns[first].parts) {
      request.system += (request.system.empty() ? "" : "\n") + part.text;
    }
  }
  const size_t last = turns.size() - 1;
  if (turns[last].role != "user" || first > last) {
    bad_param("messages", "the last message must be the user's: audio chat answers a user turn");
  }
  for (size_t i = first; i < last; ++i) request.history.push_back({turns[i].role, std::move(turns[i].parts)});
  set_user_turn(turns[last], last, request);

  // The mode follows liquid-audio's tasks: ASR and TTS are sequential, chat with speech interleaved.
  if (request.system.empty()) {
    if (job.audio_out) {
      request.system = kInterleavedSystem;
    } else if (!request.audio.empty()) {
      request.system = kAsrSystem;
    }
  }
  const bool task = request.system == kAsrSystem || request.system == kTtsSystem;
  request.mode = job.audio_out && !task ? AudioChatMode::Interleaved : AudioChatMode::Sequential;
  if (audio != nullptr) apply_voice(*audio, request);
  parse_sampling(body, request);
  job.id = next_chat_id();
  job.created = unix_now();
  if (job.audio_out) job.audio_id = AudioAnswerStore::new_id();
  return job;
}

nlohmann::json ChatAudioAnswer::envelope(bool chunk) const {
  return {{"id", job_.id},
          {"object", chunk ? "chat.completion.chunk" : "chat.completion"},
          {"created", job_.created},
          {"model", job_.model->name},
          {"system_fingerprint", nullptr}};
}

nlohmann::json ChatAudioAnswer::usage(int32_t prefix_cache_hit_tokens) const {
  int32_t frames = 0;
  for (const bool is_frame : output_.item_is_frame) frames += is_frame ? 1 : 0;
  // No prompt_tokens: the engine does not report an audio chat prompt's length.
  return {{"completion_tokens", items()},
          {"completion_tokens_details", {{"text_tokens", items() - frames}, {"audio_tokens", frames}}},
          {"prompt_tokens_details", {{"cached_tokens", prefix_cache_hit_tokens}}}};
}

int64_t ChatAudioAnswer::store() {
  return answers_.add(job_.audio_id, job_.model->name, assistant_message(output_), unix_now())->expires_at;
}

std::string ChatAudioAnswer::add(const StreamChunk& chunk) {
  output_.tokens.insert(output_.tokens.end(), chunk.tokens.begin(), chunk.tokens.end());
  output_.item_is_frame.insert(output_.item_is_frame.end(), chunk.item_is_frame.begin(), chunk.item_is_frame.end());
  output_.audio_codes.insert(output_.audio_codes.end(), chunk.audio_codes.begin(), chunk.audio_codes.end());
  output_.text += chunk.text;
  if (job_.audio_out) output_.audio.insert(output_.audio.end(), chunk.audio.begin(), chunk.audio.end());
  const bool failed = chunk.finished && chunk.finish_reason == FinishReason::Error;
  // An answer that ended early (abort, shutdown) is not kept: it was never given whole.
  const bool keep = chunk.finished && job_.audio_out &&
                    (chunk.finish_reason == FinishReason::Eos || chunk.finish_reason == FinishReason::Stop ||
                     chunk.finish_reason == FinishReason::Length);
  const int64_t expires_at = keep ? store() : 0;
  if (!job_.stream) {
    if (!chunk.finished) return {};
    if (failed) return dump_json(ApiError(500, chunk.error, {}, "internal_error").body());
    nlohmann::json message = {{"role", "assistant"}, {"content", output_.text}, {"refusal", nullptr}};
    if (job_.audio_out) {
      const int32_t rate = job_.model->engine->model_info().output_sample_rate;
      message["content"] = nullptr;
      message["audio"] = {{"id", job_.audio_id},
                          {"data", base64_encode(encode_audio(output_.audio, rate, job_.format))},
                          {"transcript", output_.text},
                          {"expires_at", keep ? nlohmann::json(expires_at) : nlohmann::json(nullptr)}};
    }
    nlohmann::json out = envelope(false);
    out["choices"] = nlohmann::json::array({{{"index", 0},
                                             {"message", std::move(message)},
                                             {"finish_reason", finish_reason_json(chunk.finish_reason)},
                                             {"logprobs", nullptr}}});
    out["usage"] = usage(chunk.prefix_cache_hit_tokens);
    return dump_json(out);
  }
  if (failed) return sse(ApiError(500, chunk.error, {}, "internal_error").body());
  nlohmann::json delta = nlohmann::json::object();
  if (first_) delta["role"] = "assistant";
  if (job_.audio_out) {
    nlohmann::json audio = nlohmann::json::object();
    if (first_) {
      delta["content"] = nullptr;
      audio["id"] = job_.audio_id;
    }
    if (!chunk.text.empty()) audio["transcript"] = chunk.text;
    if (!chunk.audio.empty()) audio["data"] = base64_encode(pcm16(chunk.audio.data(), chunk.audio.size()));
    if (keep) audio["expires_at"] = expires_at;
    if (!audio.empty()) delta["audio"] = std::move(audio);
  } else if (!chunk.text.empty() || first_) {
    delta["content"] = chunk.text;
  }
  std::string out;
  if (!delta.empty() || chunk.finished) {
    nlohmann::json event = envelope(true);
    event["choices"] = nlohmann::json::array({{{"index", 0},
                                               {"delta", std::move(delta)},
                                               {"finish_reason", finish_reason_json(chunk.finish_reason)},
                                               {"logprobs", nullptr}}});
    if (job_.include_usage) event["usage"] = nullptr;
    out = sse(event);
    first_ = false;
  }
  if (chunk.finished) {
    if (job_.include_usage) {
      nlohmann::json event = envelope(true);
      event["choices"] = nlohmann::json::array();
      event["usage"] = usage(chunk.prefix_cache_hit_tokens);
      out += sse(event);
    }
    out += "data: [DONE]\n\n";
  }
  return out;
}

}  // namespace izwi::server
