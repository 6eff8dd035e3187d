#pragma once
// One LFM2-Audio request's model state: its prompt (text ids, audio-in embeddings, earlier
// audio-out frames, in position order), the generation mode and where it stands in it (which
// modality samples next, the interleaving counter, whether the text has ended), the items it has
// generated, and the sampling of its audio head.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include <memory>

#include "codec/codec_decoder.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"
#include "layers/step/step_output.h"

namespace izwi {

/// liquid-audio's LFMModality values (modality_flags in its prompts).
enum class Lfm2AudioModality : int32_t { kText = 1, kAudioIn = 2, kAudioOut = 3 };

/// Sequential: text, then after <|audio_start|> frames until end of audio (ASR, TTS).
/// Interleaved: n_text text tokens and n_audio frames in turn (speech-to-speech chat).
enum class Lfm2AudioGeneration { kSequential, kInterleaved };

struct Lfm2AudioPrompt {
  std::vector<Lfm2AudioModality> modality;      ///< Per position.
  std::vector<int32_t> text_ids;                ///< Of the text positions, in order.
  at::Tensor audio_in;                          ///< [audio-in positions, hidden] float32, any device.
  std::vector<std::vector<int32_t>> audio_out;  ///< [audio-out positions][codebooks]: earlier turns' frames.
};

class Lfm2AudioRequestState final : public RequestState {
 public:
  /// Checks the prompt (one entry per modality flag, sizes that agree) and indexes it.
  /// Interleaved generation starts with `n_text` text items.
  Lfm2AudioRequestState(Lfm2AudioPrompt prompt, Lfm2AudioGeneration mode, int32_t n_text);

  const Lfm2AudioPrompt& prompt() const { return prompt_; }
  /// Position p's row in its modality's list (text_ids, audio_in rows or audio_out).
  int32_t index_of(int64_t position) const { return index_[static_cast<size_t>(position)]; }
  int64_t prompt_length() const { return static_cast<int64_t>(prompt_.modality.size()); }

  Lfm2AudioGeneration mode;
  bool audio_next = false;        ///< The next sampled item is a frame.
  int32_t modality_left;          ///< Interleaved: items left in the current modality's turn.
  bool text_done = false;         ///< Interleaved: <|text_end|> was sampled.
  bool ended = false;             ///< <|im_end|> was sampled.
  std::vector<StepOutput> items;  ///< Generated, in order: text tokens (codes empty) and frames.
  SamplingState audio_sampling;
  // Audio out, when the model folder has its codec: frames decoded so far and the decoder state.
  bool decodes_audio = false;
  size_t frames_decoded = 0;
  std::unique_ptr<CodecDecoderState> codec;

  bool produces_audio() const override { return decodes_audio; }

 private:
  Lfm2AudioPrompt prompt_;
  std::vector<int32_t> index_;
};

}  // namespace izwi
