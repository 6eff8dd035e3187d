#pragma once
// The log-mel of NeMo's AudioToMelSpectrogramPreprocessor (FilterbankFeatures) in eval mode, as
// LFM2-Audio's released code runs it: pre-emphasis, a centred STFT with zero padding and a
// symmetric (periodic=False) Hann window shorter than n_fft and centred in it, power spectrum,
// Slaney mel filters (built in float32 as torchaudio builds them, which the parity fixture used for
// librosa's; see the .cpp), log(x + guard), then per-feature normalisation over the valid frames
// of the whole utterance. Differs from log_mel.h (Whisper's) in every one of those steps.

#include <ATen/ATen.h>

#include <cstdint>

#include "common/json_fields.h"

namespace izwi {

struct NemoLogMelConfig {
  int64_t sample_rate = 16000;
  int64_t n_fft = 512;
  int64_t win_length = 400;  ///< int(window_size * sample_rate)
  int64_t hop = 160;         ///< int(window_stride * sample_rate)
  int64_t n_mels = 128;      ///< `features`
  double preemphasis = 0.97;
  double f_min = 0.0;
  double f_max = 8000.0;               ///< `highfreq`, sample_rate / 2 when absent
  double log_guard = 1.0 / (1 << 24);  ///< Added before the log (`log_zero_guard_value`).
  int64_t pad_to = 0;                  ///< Frames are padded with pad_value to a multiple of it (0: none).
  double pad_value = 0.0;

  /// From config.json's `preprocessor` section (NeMo's argument names and defaults). Options
  /// other than the ones above (another window, normalisation, log or frame splicing) are
  /// Unsupported; sizes out of range are InvalidFormat naming the field.
  static NemoLogMelConfig parse(const JsonFields& preprocessor);
};

/// Features [n_mels, 1 + samples / hop (rounded up to pad_to)] (float32) of a mono waveform
/// [samples] at config.sample_rate, on the waveform's device. Frames from samples / hop on (the
/// last STFT frame, and any padding) are pad_value, as NeMo masks them. Throws InvalidArgument for
/// a waveform that is not 1-D, holds fewer than hop samples (no valid frame to normalise over),
/// or holds a non-finite sample.
at::Tensor nemo_log_mel(const at::Tensor& waveform, const NemoLogMelConfig& config);

/// The number of frames nemo_log_mel gives `samples` samples, from the count alone (a caller
/// sizes a long input before computing it).
int64_t nemo_log_mel_frames(int64_t samples, const NemoLogMelConfig& config);

}  // namespace izwi
