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

}  // namespace izwi::testing
