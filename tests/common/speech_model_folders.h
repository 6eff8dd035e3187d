#pragma once
// Speech model folders with a tokenizer, so text goes in and comes out: the tiny fixtures plus a
// tokenizer whose ids fit their vocabularies.

#include <string>

namespace izwi::testing {

/// voxtral-realtime-tiny with a tekken.json: special tokens first ([STREAMING_PAD] at id
/// kStreamingPadId, as in Mistral's vocabulary), then the 256 single bytes. Returns `dir`.
constexpr int kStreamingPadId = 32;
std::string write_voxtral_with_tokenizer(const std::string& dir);

/// qwen3-tts-tiny (speech_tokenizer included) with a byte-level tokenizer.json: the 256 bytes at
/// ids 0..255 and <|im_start|> / <|im_end|> at the config's ids (590, 591). Returns `dir`.
std::string write_qwen3_tts_with_tokenizer(const std::string& dir);

/// lfm2-audio-tiny with a byte-level tokenizer.json whose added tokens spell the fixture's
/// stand-in ids (1 <|startoftext|>, 6 <|im_start|>, 7 <|im_end|>, 10 newline, 300 "system\n",
/// 301 kLfm2AudioSystem, 302 "user", 303 "assistant"), so the chat template builds the fixture's
/// prompt; the 256 byte tokens take the ids left below 512. With `codec` a moshi Mimi beside it
/// (Kyutai's sizes, random weights) voices the answers. Returns `dir`.
constexpr const char* kLfm2AudioSystem = "Respond with interleaved text and audio.";
std::string write_lfm2_audio_with_tokenizer(const std::string& dir, bool codec = false);

}  // namespace izwi::testing
