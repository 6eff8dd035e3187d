#pragma once
// Audio the speech endpoint answers with: WAV and FLAC (16-bit, through libsndfile's virtual I/O)
// and raw 16-bit little-endian PCM, as OpenAI's response_format names them; spoken chat answers
// also as MP3 and Ogg Opus (libsndfile >= 1.1 with LAME and libopus, as Debian's).

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::server {

enum class AudioFormat { Wav, Flac, Pcm, Mp3, Opus };

/// "wav", "flac" or "pcm" (the speech endpoint's formats); 400 naming response_format otherwise.
AudioFormat parse_audio_format(const std::string& name);
const char* content_type(AudioFormat format);

/// The whole file.
std::string encode_audio(const std::vector<float>& mono, int32_t sample_rate, AudioFormat format);
/// Samples as 16-bit little-endian PCM (clipped to [-1, 1]).
std::string pcm16(const float* samples, size_t count);
/// A WAV header for a stream of 16-bit PCM of unknown length (sizes set to the maximum, as
/// streaming servers do; players read to the end).
std::string streaming_wav_header(int32_t sample_rate);

}  // namespace izwi::server
