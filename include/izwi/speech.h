#pragma once
/// @file speech.h
/// Speech synthesis (text to speech) with models whose steps emit frames of audio codes
/// (Qwen3-TTS): the request, and its sampling controls.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/sampling.h"
#include "izwi/voice.h"

namespace izwi {

/// Length and sampling of a speech request. Unset sampling fields take the model's defaults
/// (ModelInfo::default_sampling / default_codebook_sampling): its generation_config.json
/// (do_sample, temperature, top_k, top_p, repetition_penalty for the main head; subtalker_dosample,
/// subtalker_temperature, subtalker_top_k, subtalker_top_p for the per-frame head), else the
/// released code's: temperature 0.9, top-k 50, top-p 1, repetition penalty 1.05, the same for the
/// per-frame head without the penalty.
struct SpeechParams {
  int32_t max_frames = 2048;  ///< Audio frames at most (one frame = 80 ms at 12.5 Hz).
  int32_t min_frames = 2;     ///< No end of speech before this many (capped at max_frames).
  SamplingParams sampling;    ///< Main head (codebook 0); its penalty is over the generated codebook-0 ids.
  /// Per-frame head (the other codebooks of each frame). Its repetition_penalty has no effect.
  SamplingParams codebook_sampling;
  std::optional<uint64_t> seed;  ///< Fixed seed for reproducible sampling (both heads).
};

/// How the text enters the model. Full: the whole text is in the prompt before the first frame
/// (the released default of CustomVoice and VoiceDesign). Streaming: the first text token is in
/// the prompt and the rest is fed one token per generated frame (the default of Base models).
enum class SpeechTextMode { Default, Streaming, Full };

/// One text-to-speech request. Give the text one way: `text` (needs the model folder's
/// tokenizer) or `text_ids`, the complete talker text ids as the released code builds them
/// (`<|im_start|>assistant\n` + text + `<|im_end|>\n<|im_start|>assistant\n`).
struct SpeechRequest {
  std::string id;                 ///< Unique among live requests; empty = engine assigns one.
  std::string text;               ///< UTF-8 text to speak.
  std::vector<int32_t> text_ids;  ///< Or the complete talker text ids (see above).
  std::string speaker;            ///< One of ModelInfo::speakers (CustomVoice models); empty = none.
  /// A cloned voice (models with ModelInfo::clones_voices, from Engine::create_voice or load_voice):
  /// its x-vector takes the speaker slot. Give a speaker or a voice, not both.
  Voice voice;
  std::string language = "auto";  ///< One of ModelInfo::languages, or "auto".
  /// Voice or style instruction (VoiceDesign, CustomVoice 1.7B; the 0.6B CustomVoice model
  /// ignores it, as released). Text needs the tokenizer; `instruct_ids` are the complete ids
  /// (`<|im_start|>user\n` + instruction + `<|im_end|>\n`).
  std::string instruct;
  std::vector<int32_t> instruct_ids;                   ///< See instruct.
  SpeechTextMode text_mode = SpeechTextMode::Default;  ///< How the text enters the talker's prompt.
  SpeechParams params;                                 ///< Length and sampling of both heads.
  /// Streaming: audio of the first chunk goes out once this many frames exist, then in chunks
  /// of `chunk_frames` (each frame is decoded exactly once; chunks concatenate to the whole).
  int32_t first_chunk_frames = 1;
  int32_t chunk_frames = 4;  ///< See first_chunk_frames.
  int32_t priority = 0;      ///< Larger runs first under SchedulingPolicy::Priority.
};

}  // namespace izwi
