#pragma once
// Slaney-style mel filters, as transformers' audio_utils.mel_filter_bank(norm="slaney",
// mel_scale="slaney") builds them for Whisper and Voxtral (and librosa's default).

#include <ATen/ATen.h>

namespace izwi {

/// Triangular filters [num_frequency_bins, num_mel_filters] (float32, CPU) over FFT bins spaced
/// evenly from 0 to sampling_rate / 2, centred evenly on the Slaney mel scale between
/// min_frequency and max_frequency, each scaled to unit area (2 / bandwidth in Hz).
at::Tensor mel_filter_bank(int num_frequency_bins, int num_mel_filters, double min_frequency, double max_frequency,
                           int sampling_rate);

}  // namespace izwi
