#include "audio/sample_checks.h"

#include <cmath>
#include <cstdint>

#include "common/check.h"

namespace izwi {

std::optional<size_t> first_unusable_sample(const float* samples, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (!(std::abs(samples[i]) <= kMaxSampleMagnitude)) return i;  // false for NaN
  }
  return std::nullopt;
}

std::string unusable_sample_reason(float sample) {
  if (!std::isfinite(sample)) return fmt::format("not finite ({})", sample);
  return fmt::format("{}, beyond ±{}", sample, kMaxSampleMagnitude);
}

void check_sample_rate(int rate, std::string_view parameter, std::string_view context) {
  if (rate <= 0) fail(ErrorCode::InvalidArgument, "{}: {} {} must be positive", context, parameter, rate);
  if (rate < kMinSampleRate || rate > kMaxSampleRate) {
    fail(ErrorCode::InvalidArgument, "{}: {} {} Hz is outside [{}, {}] Hz", context, parameter, rate, kMinSampleRate,
         kMaxSampleRate);
  }
}

size_t max_resampled_samples(size_t count, int from_rate, int to_rate) {
  // 128-bit: count (< 2^64) times a rate (< 2^31) cannot overflow.
  const unsigned __int128 scaled = static_cast<unsigned __int128>(count) * static_cast<unsigned>(to_rate);
  const unsigned __int128 out = (scaled + static_cast<unsigned>(from_rate) - 1) / static_cast<unsigned>(from_rate);
  return out > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(out);
}

void check_resampled_length(size_t count, int from_rate, int to_rate, std::string_view context) {
  const size_t out = max_resampled_samples(count, from_rate, to_rate);
  if (out > kMaxAudioSamples) {
    fail(ErrorCode::ResourceExhausted,
         "{}: resampling {} samples from {} to {} Hz gives {} samples, above the limit of {}", context, count,
         from_rate, to_rate, out, kMaxAudioSamples);
  }
}

void check_samples(const float* samples, size_t count, std::string_view context, EmptySamples empty) {
  if (count == 0) {
    if (empty == EmptySamples::Reject) fail(ErrorCode::InvalidArgument, "{}: samples is empty", context);
    return;
  }
  if (samples == nullptr) fail(ErrorCode::InvalidArgument, "{}: samples is null", context);
  if (const auto bad = first_unusable_sample(samples, count)) {
    fail(ErrorCode::InvalidArgument, "{}: samples[{}] is {}", context, *bad, unusable_sample_reason(samples[*bad]));
  }
}

void check_audio_buffer(const AudioBuffer& audio, std::string_view context) {
  check_sample_rate(audio.sample_rate, "sample_rate", context);
  if (audio.channels <= 0) {
    fail(ErrorCode::InvalidArgument, "{}: channels {} must be positive", context, audio.channels);
  }
  if (audio.samples.size() % static_cast<size_t>(audio.channels) != 0) {
    fail(ErrorCode::InvalidArgument, "{}: {} samples do not split into {} channels", context, audio.samples.size(),
         audio.channels);
  }
  check_samples(audio.samples.data(), audio.samples.size(), context);
}

}  // namespace izwi
