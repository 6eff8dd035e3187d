#pragma once
// Everything one Qwen3-TTS request needs besides its KV cache: the prompt's dual-track inputs
// and the text fed per frame, the frames generated so far (the inputs of later positions), the
// per-frame head's sampling, and the codec decoder's streaming state.

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "codec/codec_decoder.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"
#include "models/qwen3_tts/qwen3_tts_prompt.h"

namespace izwi {

class Qwen3TtsRequestState final : public RequestState {
 public:
  bool produces_audio() const override { return true; }

  TtsPrompt prompt;
  std::vector<std::vector<int32_t>> frames;  ///< Every codebook of each frame, codebook 0 first.
  SamplingState subtalker;                   ///< Sampling of codebooks 1.. (its own RNG).
  std::unique_ptr<CodecDecoderState> codec;  ///< Created at the first decode.
  int32_t frames_decoded = 0;
  /// Tests: keep the talker hidden state that produced each frame (the code predictor's input).
  bool record_hidden = false;
  std::vector<at::Tensor> hidden;
};

}  // namespace izwi
