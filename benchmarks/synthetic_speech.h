#pragma once
// A voiced-speech stand-in for benches that need a recording: a 110-210 Hz pitch glide with
// harmonics, a syllable-rate (4 Hz) envelope and a little noise (encoders refuse silence).

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace izwi::bench {

inline std::vector<float> synthetic_speech(double seconds, int32_t rate) {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  std::vector<float> samples(static_cast<size_t>(seconds * rate));
  double phase = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    phase += 2 * M_PI * (160 + 50 * std::sin(2 * M_PI * 0.6 * t)) / rate;
    double v = 0;
    for (int h = 1; h <= 5; ++h) v += std::sin(h * phase) / h;
    samples[i] = static_cast<float>(0.2 * (0.5 + 0.5 * std::sin(2 * M_PI * 4 * t)) * v) + noise(rng);
  }
  return samples;
}

}  // namespace izwi::bench
