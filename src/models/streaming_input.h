#pragma once
// Model inputs that arrive while a request runs (streamed audio). The model creates one per
// request; the engine feeds it on the worker thread between steps, and the scheduler computes
// only positions whose inputs are ready. It keeps everything needed to recompute the request
// from position 0 after a preemption.

#include <cstddef>
#include <cstdint>

namespace izwi {

/// How a speech-recognition request runs (resolved by the engine from the caller's options).
struct TranscriptionSettings {
  int32_t delay_tokens = 0;            ///< Streaming delay, in positions.
  int32_t pad_token_id = 0;            ///< Fills the delay positions of the prompt.
  bool continue_after_audio = false;   ///< Keep decoding text once the audio's positions are used.
};

class StreamingInput {
 public:
  virtual ~StreamingInput() = default;

  /// Sample rate push_audio expects (mono).
  virtual int32_t sample_rate() const = 0;
  /// Appends audio samples.
  virtual void push_audio(const float* samples, size_t count) = 0;
  /// No more audio will come.
  virtual void finish_audio() = 0;
  /// Positions whose inputs are complete now.
  virtual int32_t ready_positions() const = 0;
  /// After finish_audio: the position count at which generation ends; -1 before, or when
  /// generation may continue past the audio.
  virtual int32_t final_positions() const = 0;
};

}  // namespace izwi
