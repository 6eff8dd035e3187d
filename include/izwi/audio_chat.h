#pragma once
/// @file audio_chat.h
/// Speech-to-speech chat, speech recognition and text to speech with one model whose steps emit
/// text tokens and frames of audio codes in one stream (LFM2-Audio): the request and its modes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/output.h"
#include "izwi/sampling.h"

namespace izwi {

/// How the answer is generated, as liquid-audio releases it. Interleaved (speech-to-speech
/// chat): a few text tokens and a run of audio frames in turn until the text ends, then audio
/// until its end. Sequential (ASR, TTS): text, and audio frames after `<|audio_start|>`.
enum class AudioChatMode { Interleaved, Sequential };

/// A piece of a message: text (tokenized by the chat template), text ids, the user's speech, or
/// the assistant's speech as its frames (Output::audio_codes). One of the four per part.
struct AudioChatPart {
  std::string text;                          ///< Text, tokenized by the chat template.
  std::vector<int32_t> text_ids;             ///< Or text as token ids.
  std::vector<float> audio;                  ///< Or the user's speech: mono samples at `sample_rate`.
  int32_t sample_rate = 0;                   ///< Of `audio`.
  std::vector<std::vector<int32_t>> frames;  ///< Or the assistant's speech: codes per frame.
};

/// An earlier turn of the conversation. With a role ("system", "user" or "assistant") the
/// template frames its parts as liquid-audio's ChatState does: `<|im_start|>{role}\n{parts}
/// <|im_end|>\n`; with no role the parts are placed as they are (token level).
struct AudioChatMessage {
  std::string role;                  ///< "system", "user", "assistant", or empty (token level).
  std::vector<AudioChatPart> parts;  ///< In order.
};

/// The assistant's turn that `answer` (an audio chat Output) holds: its text ids and frames in
/// the order they were generated. As history it lets the next turn reuse the cached conversation.
inline AudioChatMessage assistant_message(const Output& answer) {
  AudioChatMessage message{"assistant", {}};
  size_t frame = 0;
  for (size_t i = 0; i < answer.tokens.size(); ++i) {
    const bool is_frame = i < answer.item_is_frame.size() && answer.item_is_frame[i];
    if (message.parts.empty() || is_frame != !message.parts.back().frames.empty()) message.parts.emplace_back();
    if (is_frame) {
      message.parts.back().frames.push_back(answer.audio_codes.at(frame++));
    } else {
      message.parts.back().text_ids.push_back(answer.tokens[i]);
    }
  }
  return message;
}

/// One turn of audio chat: a system prompt, earlier turns, then a user turn of audio and/or text.
/// The prompt is liquid-audio's: `<|startoftext|><|im_start|>system\n{system}<|im_end|>\n{history}
/// <|im_start|>user\n{audio}{text}<|im_end|>\n<|im_start|>assistant\n`, each piece tokenized on its
/// own (text needs the model folder's tokenizer). With `pre_ids` / `post_ids` it is token level:
/// `{history}{pre_ids}{audio}{post_ids}`.
struct AudioChatRequest {
  std::string id;                 ///< Unique among live requests; empty = engine assigns one.
  std::string system;             ///< The system prompt, e.g. "Respond with interleaved text and audio."
  std::string text;               ///< The user's text, after the audio.
  std::vector<float> audio;       ///< The user's speech: mono samples at `sample_rate` (resampled as needed).
  int32_t sample_rate = 0;        ///< Of `audio`.
  std::vector<int32_t> pre_ids;   ///< Token level: the ids before the audio, instead of the template.
  std::vector<int32_t> post_ids;  ///< Token level: the ids after the audio.
  /// The conversation so far (e.g. the previous user turn, then assistant_message(answer)). A
  /// request whose history is an earlier request's prompt and answer finds their KV, conv states
  /// included, in the prefix cache.
  std::vector<AudioChatMessage> history;
  AudioChatMode mode = AudioChatMode::Interleaved;  ///< How text and frames follow each other.
  int32_t max_items = 512;                          ///< Text tokens + audio frames at most.
  /// Sampling of the text tokens, and of each codebook of the audio frames. Unset fields take the
  /// model's defaults, as liquid-audio releases them: greedy. top_k = 1 is greedy too (as there).
  /// The audio head's repetition_penalty has no effect.
  SamplingParams text_sampling;
  SamplingParams audio_sampling;  ///< See text_sampling.
  std::optional<uint64_t> seed;   ///< Fixed seed for reproducible sampling (both heads).
  /// Streaming: audio goes out once this many frames exist, then in chunks of `chunk_frames`.
  int32_t first_chunk_frames = 1;
  int32_t chunk_frames = 4;  ///< See first_chunk_frames.
  int32_t priority = 0;      ///< Larger runs first under SchedulingPolicy::Priority.
};

}  // namespace izwi
