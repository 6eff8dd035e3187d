#pragma once
/// @file audio.h
/// Audio in: decoding files (WAV, FLAC, OGG/Vorbis, MP3), mixing to mono, resampling, and writing
/// WAV (16-bit PCM or 32-bit float). Errors are izwi::Error (see errors.h) whose message names the
/// file or parameter.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "izwi/export.h"

namespace izwi {

/// Decoded PCM audio, samples in [-1, 1] for integer sources.
struct AudioBuffer {
  std::vector<float> samples;  ///< Interleaved: frame 0 of every channel, then frame 1, ...
  int sample_rate = 0;         ///< Frames per second.
  int channels = 0;            ///< Samples per frame.

  /// Samples per channel.
  size_t frames() const { return channels > 0 ? samples.size() / static_cast<size_t>(channels) : 0; }
  /// Duration: frames() / sample_rate.
  double seconds() const { return sample_rate > 0 ? static_cast<double>(frames()) / sample_rate : 0.0; }
};

/// Largest number of samples (all channels) a decoded file may hold: 2^30 floats, 4 GiB.
constexpr size_t kMaxAudioSamples = size_t{1} << 30;

/// Decodes a WAV, FLAC, OGG/Vorbis or MP3 file. Throws NotFound for a missing file, Unsupported for
/// a format libsndfile does not recognise, InvalidFormat for an empty, truncated or corrupt file or
/// one with no samples, ResourceExhausted above kMaxAudioSamples.
IZWI_API AudioBuffer read_audio(const std::string& path);

/// As read_audio, from encoded bytes in memory; `name` stands for the file in error messages.
IZWI_API AudioBuffer read_audio_from_memory(const void* data, size_t size, const std::string& name);

/// Average of the channels, one sample per frame.
IZWI_API std::vector<float> to_mono(const AudioBuffer& audio);

/// Mono samples from `from_rate` to `to_rate` (libsoxr, high quality). Throws InvalidArgument for
/// empty or non-finite samples or a non-positive rate.
IZWI_API std::vector<float> resample(const std::vector<float>& mono, int from_rate, int to_rate);

/// read_audio, to_mono, then resample to `target_rate`: what a speech model needs from a file.
IZWI_API std::vector<float> load_audio_mono(const std::string& path, int target_rate);

/// How a written WAV file stores its samples.
enum class WavFormat {
  /// 32-bit IEEE float: the samples exactly. Its header carries the fmt chunk's cbSize and a fact
  /// chunk (the layout sox writes), which sox reads without "missing extended part of fmt chunk".
  Float32,
  Pcm16,  ///< 16-bit integer PCM, clipped to [-1, 1]: half the bytes, read by every player.
};

/// Writes mono samples as a WAV file.
IZWI_API void write_wav(const std::string& path, const std::vector<float>& mono, int sample_rate,
                        WavFormat format = WavFormat::Float32);

/// A mono WAV file written chunk by chunk, as streamed speech arrives. The header is completed
/// by close() (or the destructor, which cannot report a failure).
class IZWI_API WavWriter {
 public:
  /// Throws InvalidArgument naming the file when it cannot be created or the rate is not positive.
  WavWriter(const std::string& path, int sample_rate, WavFormat format = WavFormat::Float32);
  ~WavWriter();
  WavWriter(const WavWriter&) = delete;
  WavWriter& operator=(const WavWriter&) = delete;

  /// Appends samples; throws InvalidArgument naming the file for non-finite samples or a write error.
  void write(const float* samples, size_t count);
  /// Finishes the file; idempotent.
  void close();

 private:
  struct File;
  std::unique_ptr<File> file_;
  std::string path_;
};

}  // namespace izwi
