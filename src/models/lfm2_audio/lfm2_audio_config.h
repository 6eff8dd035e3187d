#pragma once
// LFM2-Audio's config.json as liquid-audio releases it: no top-level model_type, sections `lfm`
// (the LFM2 backbone), `encoder` (FastConformer), `preprocessor` (its log-mel) and
// `depthformer`, plus the audio-out and interleaving settings.

#include <cstdint>

#include "audio/nemo_log_mel.h"
#include "io/hf_config.h"
#include "models/lfm2_audio/depthformer.h"
#include "models/lfm2_audio/fast_conformer.h"
#include "models/lfm2_backbone.h"

namespace izwi {

struct Lfm2AudioConfig {
  Lfm2Config lfm;
  NemoLogMelConfig mel;
  FastConformerConfig encoder;
  DepthformerConfig depthformer;
  int64_t codebooks = 8;
  int32_t interleaved_n_text = 6;
  int32_t interleaved_n_audio = 12;
  bool tie_audio_embeddings = false;

  // Ids liquid-audio hard-codes.
  static constexpr int32_t kImEnd = 7;          ///< <|im_end|>: ends the turn.
  static constexpr int32_t kAudioStart = 128;   ///< <|audio_start|>: sequential mode switches to audio.
  static constexpr int32_t kTextEnd = 130;      ///< <|text_end|>: interleaved mode's text is done.
  static constexpr int32_t kEndOfAudio = 2048;  ///< The code after the 2048 Mimi codes.

  /// Every section, checked before any weight is read.
  static Lfm2AudioConfig parse(const HfConfig& hf);
};

}  // namespace izwi
