#pragma once
/// @file audio_chat.h
/// Speech-to-speech chat, speech recognition and text to speech with one model whose steps emit
/// text tokens and frames of audio codes in one stream (LFM2-Audio): the request and its modes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace izwi {

/// How the answer is generated, as liquid-audio releases it. Interleaved (speech-to-speech
/// chat): a few text tokens and a run of audio frames in turn until the text ends, then audio
/// until its end. Sequential (ASR, TTS): text, and audio frames after `<|audio_start|>`.
enum class AudioChatMode { Interleaved, Sequential };

/// An earlier part of the conversation, at token level: text ids, the user's speech, or the
/// assistant's speech as its frames (Output::audio_codes). One of the three per part.
struct AudioChatPart {
  std::vector<int32_t> text_ids;
  std::vector<float> audio;  ///< Mono samples at `sample_rate`.
  int32_t sample_rate = 0;
  std::vector<std::vector<int32_t>> frames;
};

/// One turn of audio chat: a system prompt, then a user turn of audio and/or text. The prompt is
/// `<|startoftext|><|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{audio}{text}
/// <|im_end|>\n<|im_start|>assistant\n` (the text parts need the model folder's tokenizer), or,
/// with `pre_ids` / `post_ids`, exactly those ids before and after the audio.
struct AudioChatRequest {
  std::string id;  ///< Unique among live requests; empty = engine assigns one.
  std::string system;
  std::string text;          ///< The user's text, after the audio.
  std::vector<float> audio;  ///< The user's speech: mono samples at `sample_rate` (resampled as needed).
  int32_t sample_rate = 0;
  std::vector<int32_t> pre_ids, post_ids;  ///< Token level: replace the template around the audio.
  /// Token level (with pre_ids / post_ids): the conversation so far, before pre_ids, as the model
  /// saw it (each turn's framing ids, the user's audio, each answer's text ids and frames in
  /// order). A request whose history is an earlier request's prompt and answer finds their KV in
  /// the prefix cache.
  std::vector<AudioChatPart> history;
  AudioChatMode mode = AudioChatMode::Interleaved;
  int32_t max_items = 512;  ///< Text tokens + audio frames at most.
  /// Text sampling; unset = greedy. Audio: per codebook, unset = greedy.
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> audio_temperature;
  std::optional<int32_t> audio_top_k;
  std::optional<uint64_t> seed;
  /// Streaming: audio goes out once this many frames exist, then in chunks of `chunk_frames`.
  int32_t first_chunk_frames = 1;
  int32_t chunk_frames = 4;
  int32_t priority = 0;
};

}  // namespace izwi
