#pragma once
// The log-mel of vocoder-style front ends (HiFi-GAN's mel_spectrogram, which Qwen3-TTS's speaker
// encoder reads): reflect padding of (n_fft - hop) / 2 on each side, an uncentred STFT with a
// periodic Hann window, magnitude sqrt(re^2 + im^2 + 1e-9), Slaney mel filters, natural log of
// the mel floored at 1e-5. Differs from log_mel.h (Whisper's) in padding, magnitude and log.

#include <ATen/ATen.h>

namespace izwi {

struct MagnitudeLogMelConfig {
  int n_fft = 1024;
  int hop = 256;
  int n_mels = 128;
  int sample_rate = 24000;
  double f_min = 0;
  double f_max = 12000;
};

/// Features [samples / hop, n_mels] (float32, frames first) of a mono waveform [samples] at
/// config.sample_rate. Throws InvalidArgument naming `context` for a waveform that is not 1-D or
/// too short for the reflect padding (at least (n_fft - hop) / 2 + 1 samples and one hop).
at::Tensor magnitude_log_mel(const at::Tensor& waveform, const MagnitudeLogMelConfig& config,
                             const char* context = "magnitude_log_mel");

}  // namespace izwi
