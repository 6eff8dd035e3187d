#pragma once
// Log-mel features of audio that arrives in chunks, identical to log_mel_spectrogram of the whole
// waveform. A frame is final once its window holds only real samples (and, near the start, the
// reflect padding, which needs n_fft / 2 + 1 samples); the last frames need the reflect padding
// of the end, which only finish() can build.

#include <ATen/ATen.h>

#include <cstddef>
#include <vector>

#include "audio/log_mel.h"

namespace izwi {

class StreamingLogMel {
 public:
  /// Frames are computed on `device` (the model's: the samples cross to it once, the features
  /// stay there).
  explicit StreamingLogMel(const LogMelConfig& config, const at::Device& device = at::kCPU);

  /// Features [n_mels, n] (float32, on the device) of the frames these samples completed; n may be 0.
  /// Throws InvalidArgument for non-finite samples or a push after finish().
  at::Tensor push(const float* samples, size_t count);
  /// The remaining frames. Throws InvalidArgument if the whole stream held n_fft / 2 samples or
  /// fewer (as log_mel_spectrogram does), or when called twice.
  at::Tensor finish();

 private:
  at::Tensor take_frames(int64_t count);

  LogMelFrames frames_;
  std::vector<float> padded_;  ///< The start-padded stream from the first frame not yet returned.
  int64_t received_ = 0;       ///< Samples pushed in total.
  int64_t emitted_ = 0;        ///< Frames returned in total.
  bool start_padded_ = false;  ///< Reflect padding of the start is in padded_.
  bool finished_ = false;
};

}  // namespace izwi
