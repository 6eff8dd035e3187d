#pragma once
// The one home of a request's model state that is not KV cache: streamed audio input and its
// encoder state (speech recognition), the prompt inputs built from embeddings, the frames a
// speech model has generated and its codec decoder state (speech synthesis). The model creates
// it for a request; the request owns it on the worker thread, and it is freed with the request
// on every exit path (finish, abort, error, shutdown). It survives preemption: it keeps what is
// needed to recompute the request's positions from position 0.
//
// Recurrent state that must be snapshotted at block boundaries for the prefix cache (LFM2's conv
// state) is cache state, not request state: it lives in CacheBuffers beside the KV blocks.

#include <cstddef>
#include <cstdint>
#include <limits>

namespace izwi {

/// How a speech-recognition request runs (resolved by the engine from the caller's options).
struct TranscriptionSettings {
  int32_t delay_tokens = 0;  ///< Streaming delay, in positions.
  int32_t pad_token_id = 0;  ///< Fills the delay positions of the prompt.
};

class RequestState {
 public:
  virtual ~RequestState() = default;

  // Streamed audio input (speech recognition). Models without audio input keep the defaults.
  /// True when the request's positions wait for audio pushed while it runs.
  virtual bool takes_audio() const { return false; }
  /// Sample rate push_audio expects (mono).
  virtual int32_t sample_rate() const { return 0; }
  /// Appends audio samples.
  virtual void push_audio(const float* samples, size_t count);
  /// No more audio will come.
  virtual void finish_audio();
  /// Positions whose audio has fully arrived. Positions past the end of finished audio have no
  /// audio (models treat them as silence-free text positions).
  virtual int32_t audio_positions() const { return std::numeric_limits<int32_t>::max(); }
  virtual bool audio_finished() const { return true; }

  // Audio output (speech synthesis): the model records each frame it samples here.
  /// True when the request's step outputs are frames of audio codes.
  virtual bool produces_audio() const { return false; }
};

}  // namespace izwi
