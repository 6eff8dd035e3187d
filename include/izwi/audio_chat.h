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
