#pragma once
// Validation of raw PCM handed to izwi (buffers, rates), shared by the audio functions and the
// engine's audio input so every caller gets the same InvalidArgument messages.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "izwi/audio.h"

namespace izwi {

/// Sample rates izwi accepts anywhere (files, push_audio, resampling). Below 1 kHz is not speech
/// audio (a header saying 1 Hz is corrupt: resampling it to 16 kHz would multiply the samples by
/// 16,000); 768 kHz is the highest rate audio interfaces use.
constexpr int kMinSampleRate = 1000;
constexpr int kMaxSampleRate = 768000;

/// Whether a zero-length chunk is acceptable: streaming pushes may be empty, whole inputs not.
enum class EmptySamples { Reject, Allow };

/// Largest sample magnitude izwi accepts. Full scale is 1 (32768 in int16-scaled floats); a float
/// file holding 1e30 is corrupt, and its squares overflow every log-mel frontend to Inf.
constexpr float kMaxSampleMagnitude = 65536.0f;

/// Index of the first sample that is NaN, infinite or beyond kMaxSampleMagnitude, if any.
std::optional<size_t> first_unusable_sample(const float* samples, size_t count);

/// The reason first_unusable_sample gave `sample`: "not finite (nan)" or "1e+30, beyond ±65536".
std::string unusable_sample_reason(float sample);

/// Throws InvalidArgument "<context>: <parameter> <rate> must be positive" unless rate > 0, and
/// "<context>: <parameter> <rate> Hz is outside [1000, 768000] Hz" outside the supported range.
void check_sample_rate(int rate, std::string_view parameter, std::string_view context);

/// Samples resampling `count` samples from `from_rate` to `to_rate` produces (rounded up).
size_t max_resampled_samples(size_t count, int from_rate, int to_rate);

/// Throws ResourceExhausted naming `context` if resampling `count` samples would produce more
/// than kMaxAudioSamples.
void check_resampled_length(size_t count, int from_rate, int to_rate, std::string_view context);

/// Throws InvalidArgument naming `context` for null, empty (when rejected) or unusable samples
/// (first_unusable_sample).
void check_samples(const float* samples, size_t count, std::string_view context,
                   EmptySamples empty = EmptySamples::Reject);

/// check_samples and check_sample_rate on a buffer, plus a positive channel count dividing the
/// sample count.
void check_audio_buffer(const AudioBuffer& audio, std::string_view context);

}  // namespace izwi
