#pragma once
// Qwen3-TTS 12 Hz: config.json (talker_config with its code_predictor_config, the codec control,
// language and speaker ids, the text-track special ids), as the released code reads it. Its
// sampling defaults are read by io/generation_defaults.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "io/hf_config.h"
#include "models/llama.h"

namespace izwi {

struct Qwen3TtsConfig {
  std::string tts_model_type;  ///< custom_voice, voice_design or base.
  std::string tts_model_size;  ///< e.g. "0b6", "1b7".
  LlamaConfig talker;          ///< Its vocab_size is the codec vocabulary (3072).
  LlamaConfig code_predictor;  ///< Its vocab_size is one codebook (2048).
  int64_t text_vocab_size = 0, text_hidden_size = 0;
  int32_t num_code_groups = 0;
  // Codec-track control ids.
  int32_t codec_pad = 0, codec_bos = 0, codec_eos = 0, codec_think = 0, codec_nothink = 0, codec_think_bos = 0,
          codec_think_eos = 0;
  // Text-track special ids.
  int32_t im_start = 0, im_end = 0, tts_pad = 0, tts_bos = 0, tts_eos = 0;
  std::map<std::string, int32_t> languages;             ///< codec_language_id
  std::map<std::string, int32_t> speakers;              ///< spk_id
  std::map<std::string, std::string> speaker_dialects;  ///< spk_is_dialect entries that name a dialect

  static Qwen3TtsConfig parse(const HfConfig& config);
  /// The released CustomVoice wrapper drops instructions for the 0.6B model (its size string is
  /// matched as a substring of "0b6", exactly as released).
  bool ignores_instruct() const;
};

}  // namespace izwi
