#pragma once
// The log-mel frontend of Whisper-style speech encoders (Voxtral Realtime's feature extractor):
// centred STFT with reflect padding, periodic Hann window, power spectrum, Slaney mel filters,
// log10, a floor 8 below a fixed maximum, then (x + 4) / 4. Runs on the waveform's device.

#include <ATen/ATen.h>

namespace izwi {

struct LogMelConfig {
  int n_fft = 400;
  int hop = 160;
  int n_mels = 128;
  int sample_rate = 16000;
  float global_log_mel_max = 1.5f;  ///< Values below this minus 8 (log10 units) are raised to it.
};

/// Log-mel features [n_mels, samples / hop] (float32) of a mono waveform [samples] at
/// config.sample_rate. Frame t is centred on sample t * hop; like the reference, the last STFT
/// frame (centred on the final hop boundary) is dropped. Throws InvalidArgument for a waveform
/// that is not 1-D or holds n_fft / 2 samples or fewer (reflect padding needs more).
at::Tensor log_mel_spectrogram(const at::Tensor& waveform, const LogMelConfig& config);

/// What log_mel_spectrogram and StreamingLogMel share: a config's window and mel filters, built
/// once, and the features of frames cut from an already padded waveform.
class LogMelFrames {
 public:
  /// Throws InvalidArgument for a config with a non-positive size or n_fft < 2.
  LogMelFrames(const LogMelConfig& config, const at::Device& device);
  const LogMelConfig& config() const { return config_; }
  at::Device device() const { return window_.device(); }
  /// Features [n_mels, count] of the frames starting at padded[t * hop], t < count.
  at::Tensor compute(const at::Tensor& padded, int64_t count) const;
  /// Frames of a whole waveform of `samples`: the centred STFT's frame count minus the last.
  int64_t total_frames(int64_t samples) const;
  /// Throws InvalidArgument naming `context` unless `samples` > n_fft / 2 (reflect padding needs it).
  void check_length(int64_t samples, const char* context) const;

 private:
  LogMelConfig config_;
  at::Tensor window_;     ///< Periodic Hann [n_fft].
  at::Tensor filters_t_;  ///< Mel filters transposed, [n_mels, n_fft / 2 + 1].
};

}  // namespace izwi
