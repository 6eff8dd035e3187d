#pragma once
// /v1/chat/completions with audio (OpenAI's audio chat shape) over an audio chat model
// (LFM2-Audio): `input_audio` content parts, `modalities: ["text", "audio"]` with `audio: {voice,
// format}`, and earlier speech answers given back by `audio: {id}`, to an AudioChatRequest; the
// engine's items to `message.audio` (whole) or `delta.audio` pieces (streamed).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "izwi/audio_chat.h"
#include "izwi/output.h"
#include "server/audio_answer_store.h"
#include "server/audio_encoding.h"
#include "server/served_models.h"

namespace izwi::server {

/// The sample rate of `input_audio` parts in format "pcm16" when they do not state theirs
/// (`input_audio.sample_rate`): OpenAI's pcm16, 24 kHz.
constexpr int32_t kDefaultPcm16Rate = 24000;

struct ChatAudioJob {
  ServedModel* model = nullptr;
  bool stream = false;
  bool include_usage = false;             ///< stream_options.include_usage
  bool audio_out = false;                 ///< modalities holds "audio": the answer is message.audio
  AudioFormat format = AudioFormat::Pcm;  ///< audio.format
  AudioChatRequest request;
  std::string id;        ///< "chatcmpl-..."
  std::string audio_id;  ///< message.audio.id (audio_out)
  int64_t created = 0;
};

/// True when a chat request is for the audio route: a user message with an `input_audio` part, an
/// assistant message with `audio`, or `modalities` holding "audio".
bool is_chat_audio_request(const nlohmann::json& body);

/// 400 naming the field for a bad one (a part the model cannot take: messages[i].content[j]; audio
/// it cannot give: modalities; malformed base64 or unreadable audio: its input_audio.data; an
/// unknown or expired answer: messages[i].audio.id); 404 for an unknown model.
ChatAudioJob parse_chat_audio_request(const nlohmann::json& body, const ServedModels& models,
                                      const AudioAnswerStore& answers);

/// The answer as the engine's chunks arrive: what to send for each (the whole body at the last
/// chunk, or each chunk's server-sent events), storing a speech answer for its next turn.
class ChatAudioAnswer {
 public:
  ChatAudioAnswer(const ChatAudioJob& job, AudioAnswerStore& answers) : job_(job), answers_(answers) {}
  std::string add(const StreamChunk& chunk);
  /// Text tokens + audio frames so far.
  int32_t items() const { return static_cast<int32_t>(output_.tokens.size()); }

 private:
  nlohmann::json envelope(bool chunk) const;
  nlohmann::json usage(int32_t prefix_cache_hit_tokens) const;
  /// Stores the finished speech answer; its expires_at.
  int64_t store();

  const ChatAudioJob& job_;
  AudioAnswerStore& answers_;
  Output output_;  ///< Everything so far.
  bool first_ = true;
};

}  // namespace izwi::server
