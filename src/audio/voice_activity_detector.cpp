#include "audio/voice_activity_detector.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include "common/check.h"

namespace izwi {

namespace {

constexpr double kLowHz = 100.0;
constexpr double kHighHz = 4000.0;

/// In-place radix-2 FFT; `data.size()` is a power of two.
void fft(std::vector<std::complex<double>>& data) {
  const size_t n = data.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const std::complex<double> step = std::polar(1.0, -2 * M_PI / static_cast<double>(len));
    for (size_t i = 0; i < n; i += len) {
      std::complex<double> w(1.0);
      for (size_t k = 0; k < len / 2; ++k, w *= step) {
        const std::complex<double> odd = data[i + k + len / 2] * w;
        data[i + k + len / 2] = data[i + k] - odd;
        data[i + k] += odd;
      }
    }
  }
}

}  // namespace

VoiceActivityDetector::VoiceActivityDetector(const VadOptions& options, int32_t sample_rate)
    : options_(options), sample_rate_(sample_rate) {
  if (!(options.threshold >= 0.0f && options.threshold <= 1.0f)) {
    fail(ErrorCode::InvalidArgument, "turn_detection.threshold must be in [0, 1], not {}", options.threshold);
  }
  if (options.prefix_padding_ms < 0) {
    fail(ErrorCode::InvalidArgument, "turn_detection.prefix_padding_ms must be >= 0, not {}",
         options.prefix_padding_ms);
  }
  if (options.silence_duration_ms < 0) {
    fail(ErrorCode::InvalidArgument, "turn_detection.silence_duration_ms must be >= 0, not {}",
         options.silence_duration_ms);
  }
  if (sample_rate < 8000) fail(ErrorCode::InvalidArgument, "VAD sample rate must be >= 8000, not {}", sample_rate);
  frame_size_ = static_cast<size_t>(sample_rate) * kFrameMs / 1000;
  frame_.reserve(frame_size_);
}

float VoiceActivityDetector::speech_probability(const float* frame, size_t count, int32_t sample_rate) {
  if (count == 0) return 0.0f;
  double energy = 0;
  for (size_t i = 0; i < count; ++i) energy += static_cast<double>(frame[i]) * frame[i];
  const double rms = std::sqrt(energy / static_cast<double>(count));
  const double dbfs = 20 * std::log10(std::max(rms, 1e-10));
  const double loudness = std::clamp((dbfs + 55.0) / 20.0, 0.0, 1.0);
  if (loudness == 0.0) return 0.0f;

  size_t n = 1;
  while (n < count) n <<= 1;
  std::vector<std::complex<double>> spectrum(n);
  for (size_t i = 0; i < count; ++i) {
    const double hann = 0.5 - 0.5 * std::cos(2 * M_PI * static_cast<double>(i) / static_cast<double>(count));
    spectrum[i] = frame[i] * hann;
  }
  fft(spectrum);
  const double hz_per_bin = static_cast<double>(sample_rate) / static_cast<double>(n);
  const auto low = static_cast<size_t>(std::ceil(kLowHz / hz_per_bin));
  const auto high = std::min(n / 2, static_cast<size_t>(kHighHz / hz_per_bin));
  double log_sum = 0, sum = 0;
  for (size_t k = low; k <= high; ++k) {
    const double power = std::norm(spectrum[k]) + 1e-20;
    log_sum += std::log(power);
    sum += power;
  }
  const double bins = static_cast<double>(high - low + 1);
  const double flatness = std::exp(log_sum / bins) / (sum / bins);
  const double tonality = std::clamp((0.65 - flatness) / 0.35, 0.0, 1.0);
  return static_cast<float>(loudness * tonality);
}

std::vector<VadEvent> VoiceActivityDetector::push(const float* samples, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    frame_.push_back(samples[i]);
    ++seen_;
    if (frame_.size() == frame_size_) frame_done();
  }
  std::vector<VadEvent> events;
  events.swap(pending_);
  return events;
}

void VoiceActivityDetector::frame_done() {
  const bool speech = speech_probability(frame_.data(), frame_.size(), sample_rate_) >= options_.threshold;
  frame_.clear();
  ++frames_;
  const auto frame_end = frames_ * static_cast<int64_t>(frame_size_);
  if (!in_speech_) {
    speech_run_ = speech ? speech_run_ + 1 : 0;
    if (speech_run_ < kStartFrames) return;
    in_speech_ = true;
    silence_run_ = 0;
    speech_end_ = frame_end;
    const int64_t onset = frame_end - static_cast<int64_t>(kStartFrames * frame_size_);
    const int64_t padding = static_cast<int64_t>(options_.prefix_padding_ms) * sample_rate_ / 1000;
    pending_.push_back({VadEvent::Kind::SpeechStarted, std::max<int64_t>(0, onset - padding)});
    return;
  }
  if (speech) {
    silence_run_ = 0;
    speech_end_ = frame_end;
    return;
  }
  ++silence_run_;
  if (silence_run_ * kFrameMs >= std::max(options_.silence_duration_ms, kFrameMs)) {
    in_speech_ = false;
    speech_run_ = 0;
    pending_.push_back({VadEvent::Kind::SpeechStopped, speech_end_});
  }
}

}  // namespace izwi
