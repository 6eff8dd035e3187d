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
  /// Positions whose audio has fully arrived. Positions past the end of finished audio have no
  /// audio (models treat them as silence-free text positions).
  virtual int32_t audio_positions() const = 0;
  virtual bool audio_finished() const = 0;
};

}  // namespace izwi
