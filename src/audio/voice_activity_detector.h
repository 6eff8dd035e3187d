#pragma once
// Server-side turn detection for realtime conversations (docs/serving.md, "Realtime
// conversations"): an energy and spectral-flatness voice activity detector over 20 ms frames.
// A frame's speech probability is its loudness score times its tonality score:
//   loudness = clamp((dBFS + 55) / 20, 0, 1)   (-55 dBFS and below: 0; -35 dBFS and above: 1)
//   tonality = clamp((0.65 - flatness) / 0.35, 0, 1)
// where flatness is the spectral flatness (geometric over arithmetic mean of the Hann-windowed
// power spectrum, 100 Hz to 4 kHz): voiced speech is harmonic (flatness well under 0.3), hiss
// and broadband noise are flat (about 0.56 for white noise), so loud noise alone does not open a
// turn. Speech starts after kStartFrames frames at or above the threshold in a row, and stops
// once `silence_duration_ms` of frames below it follow; the start is reported `prefix_padding_ms`
// early (never before the first sample) so the turn keeps the onset the detector needed to hear.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace izwi {

struct VadOptions {
  float threshold = 0.5f;             ///< Speech probability in [0, 1] a frame needs to count as speech.
  int32_t prefix_padding_ms = 300;    ///< Audio kept before the detected start.
  int32_t silence_duration_ms = 500;  ///< Silence that ends a turn.
};

/// A change the detector saw, in samples since the detector began.
struct VadEvent {
  enum class Kind { SpeechStarted, SpeechStopped };
  Kind kind;
  int64_t sample;  ///< Started: the turn's first sample (padding included); stopped: just past its last speech frame.
};

class VoiceActivityDetector {
 public:
  /// Consecutive speech frames that open a turn (60 ms): a click or a single loud frame does not.
  static constexpr int kStartFrames = 3;
  static constexpr int kFrameMs = 20;

  /// Throws InvalidArgument naming the field for a threshold outside [0, 1], a negative
  /// duration, or a rate under 8 kHz.
  VoiceActivityDetector(const VadOptions& options, int32_t sample_rate);

  /// Feeds mono samples in [-1, 1]; returns the starts and stops they completed, in order.
  std::vector<VadEvent> push(const float* samples, size_t count);
  /// The speech probability of one frame of `count` samples at `sample_rate` (the score above).
  static float speech_probability(const float* frame, size_t count, int32_t sample_rate);

  bool in_speech() const { return in_speech_; }
  int64_t samples_seen() const { return seen_; }
  const VadOptions& options() const { return options_; }

 private:
  void frame_done();

  VadOptions options_;
  int32_t sample_rate_;
  size_t frame_size_;
  std::vector<float> frame_;
  int64_t seen_ = 0;         ///< Samples pushed so far.
  int64_t frames_ = 0;       ///< Whole frames scored so far.
  int speech_run_ = 0;       ///< Consecutive speech frames (before the start).
  int64_t silence_run_ = 0;  ///< Consecutive non-speech frames (in speech).
  int64_t speech_end_ = 0;   ///< Sample just past the last speech frame.
  bool in_speech_ = false;
  std::vector<VadEvent> pending_;
};

}  // namespace izwi
