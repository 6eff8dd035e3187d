#pragma once
/// @file voice.h
/// Cloned voices: what a voice-cloning model (Qwen3-TTS Base) computes once from reference audio
/// (Engine::create_voice) and reuses for every request that names it (SpeechRequest::voice).
/// Requests in one voice share its prompt positions through the prefix cache. A voice is plain
/// data: copy it, keep it, or save it to a small JSON file and load it in another process.

#include <cstdint>
#include <string>
#include <vector>

#include "izwi/export.h"

namespace izwi {

/// A speaker's voice for speech synthesis (Engine::create_voice, SpeechRequest::voice): plain
/// data, saved and loaded with save_voice / load_voice.
struct Voice {
  std::string model_type;      ///< The model family that made it (e.g. "qwen3_tts").
  std::vector<float> xvector;  ///< Speaker embedding, as wide as the model's talker.
  /// In-context cloning (both set, or neither): the reference transcript as talker text ids
  /// (`<|im_start|>assistant\n` + transcript + `<|im_end|>\n`) and the reference audio's codec
  /// frames ([frames][codebooks]). The model continues the reference: the prompt carries both,
  /// and the decoder starts from the reference's state, so no reference audio is in the output.
  std::vector<int32_t> reference_text_ids;
  std::vector<std::vector<int32_t>> reference_codes;  ///< See reference_text_ids.

  bool empty() const { return xvector.empty(); }                ///< No voice (no x-vector).
  bool in_context() const { return !reference_codes.empty(); }  ///< An in-context voice.
};

/// What the reference recording says, for in-context cloning (Engine::create_voice): UTF-8 text,
/// tokenized by the model folder's tokenizer inside the reference framing, or the complete framed
/// ids (as Voice::reference_text_ids holds them). Both empty: an x-vector-only voice.
struct VoiceTranscript {
  std::string text;               ///< UTF-8 text.
  std::vector<int32_t> text_ids;  ///< Or the complete framed ids.

  bool empty() const { return text.empty() && text_ids.empty(); }  ///< Neither given.
};

/// Largest voice file load_voice reads (a 2048-wide x-vector and a minute of reference codes take
/// about 200 KB).
constexpr size_t kMaxVoiceFileBytes = size_t{16} << 20;

/// Writes `voice` as JSON ({"format": "izwi-voice", "version": 1, "model_type", "xvector", and
/// for in-context voices "reference_text_ids", "reference_codes"}).
/// InvalidArgument for an empty voice or non-finite values; InvalidArgument naming the file when
/// it cannot be written.
IZWI_API void save_voice(const Voice& voice, const std::string& path);

/// Reads a file save_voice wrote. NotFound for a missing file; InvalidFormat naming the file and
/// the field for anything else (not a voice file, another version, missing or non-finite values).
IZWI_API Voice load_voice(const std::string& path);

}  // namespace izwi
