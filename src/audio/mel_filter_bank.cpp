#include "audio/mel_filter_bank.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/check.h"

namespace izwi {
namespace {

// Slaney's scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above (27 mels per
// factor 6.4).
constexpr double kMinLogHertz = 1000.0;
constexpr double kMinLogMel = 15.0;
const double kLogStep = std::log(6.4) / 27.0;

double hertz_to_mel(double hertz) {
  return hertz < kMinLogHertz ? 3.0 * hertz / 200.0 : kMinLogMel + std::log(hertz / kMinLogHertz) / kLogStep;
}

double mel_to_hertz(double mel) {
  return mel < kMinLogMel ? 200.0 * mel / 3.0 : kMinLogHertz * std::exp(kLogStep * (mel - kMinLogMel));
}

}  // namespace

at::Tensor mel_filter_bank(int num_frequency_bins, int num_mel_filters, double min_frequency, double max_frequency,
                           int sampling_rate) {
  IZWI_CHECK(num_frequency_bins > 1 && num_mel_filters > 0 && sampling_rate > 0 && max_frequency > min_frequency,
             "mel_filter_bank({}, {}, {}, {}, {})", num_frequency_bins, num_mel_filters, min_frequency, max_frequency,
             sampling_rate);
  // Computed in double like the numpy reference, rounded to float32 once at the end.
  const double nyquist = sampling_rate / 2;  // integer division, as the reference's sampling_rate // 2
  std::vector<double> fft_freqs(num_frequency_bins);
  for (int i = 0; i < num_frequency_bins; ++i) fft_freqs[i] = nyquist * i / (num_frequency_bins - 1);
  const double mel_min = hertz_to_mel(min_frequency);
  const double mel_max = hertz_to_mel(max_frequency);
  std::vector<double> filter_freqs(num_mel_filters + 2);  // band edges and centres, in Hz
  for (int i = 0; i < num_mel_filters + 2; ++i) {
    filter_freqs[i] = mel_to_hertz(mel_min + (mel_max - mel_min) * i / (num_mel_filters + 1));
  }
  at::Tensor filters = at::empty({num_frequency_bins, num_mel_filters}, at::kFloat);
  auto out = filters.accessor<float, 2>();
  for (int m = 0; m < num_mel_filters; ++m) {
    const double lower = filter_freqs[m], centre = filter_freqs[m + 1], upper = filter_freqs[m + 2];
    const double area_norm = 2.0 / (upper - lower);
    for (int f = 0; f < num_frequency_bins; ++f) {
      const double rising = (fft_freqs[f] - lower) / (centre - lower);
      const double falling = (upper - fft_freqs[f]) / (upper - centre);
      out[f][m] = static_cast<float>(std::max(0.0, std::min(rising, falling)) * area_norm);
    }
  }
  return filters;
}

}  // namespace izwi
