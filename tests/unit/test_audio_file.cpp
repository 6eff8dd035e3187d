// Audio files: every supported format round-trips through libsndfile, channels mix to mono, and
// each kind of bad input (missing, empty, truncated, corrupt, unsupported, absurd size, bad raw
// samples) gives a typed error that names the file.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <random>

#include "audio/audio_file.h"
#include "common/error_message.h"
#include "common/signals.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::error_message;
using testing::sine;
using testing::TempDir;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The code of the izwi::Error `fn` throws (nullopt: none), checking that its message names `name`.
std::optional<ErrorCode> error_code_naming(const std::string& name, const std::function<void()>& fn) {
  const std::string message = error_message(fn);
  EXPECT_NE(message.find(name), std::string::npos) << "'" << message << "' does not name " << name;
  return testing::error_code_of(fn);
}

double rms_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum / static_cast<double>(a.size()));
}

TEST(AudioFile, FloatWavRoundTripsExactly) {
  TempDir dir;
  const std::vector<float> samples = sine(440, 16000, 4000);
  write_wav(dir.file("a.wav"), samples, 16000);
  const AudioBuffer audio = read_audio(dir.file("a.wav"));
  EXPECT_EQ(audio.sample_rate, 16000);
  EXPECT_EQ(audio.channels, 1);
  EXPECT_EQ(audio.frames(), 4000u);
  EXPECT_DOUBLE_EQ(audio.seconds(), 0.25);
  EXPECT_EQ(audio.samples, samples);
}

TEST(AudioFile, EncodedFormatsRoundTrip) {
  TempDir dir;
  struct Case {
    AudioFileFormat format;
    const char* name;
    double max_rms_error;  // 16-bit quantisation for FLAC; perceptual coding for the lossy ones
  };
  const std::vector<float> samples = sine(440, 16000, 16000);
  for (const Case& c : {Case{AudioFileFormat::Flac, "a.flac", 1e-4}, Case{AudioFileFormat::OggVorbis, "a.ogg", 0.05},
                        Case{AudioFileFormat::Mp3, "a.mp3", 0.05}}) {
    write_audio(dir.file(c.name), AudioBuffer{samples, 16000, 1}, c.format);
    const AudioBuffer audio = read_audio(dir.file(c.name));
    EXPECT_EQ(audio.sample_rate, 16000) << c.name;
    EXPECT_EQ(audio.channels, 1) << c.name;
    ASSERT_EQ(audio.frames(), samples.size()) << c.name;
    EXPECT_LT(rms_difference(audio.samples, samples), c.max_rms_error) << c.name;
    // The same bytes from memory decode identically.
    const std::string bytes = file_bytes(dir.file(c.name));
    EXPECT_EQ(read_audio_from_memory(bytes.data(), bytes.size(), c.name).samples, audio.samples) << c.name;
  }
}

TEST(AudioFile, StereoMixesToMono) {
  TempDir dir;
  const std::vector<float> left = sine(440, 16000, 800), right = sine(1000, 16000, 800, 0.25f);
  AudioBuffer stereo{{}, 16000, 2};
  for (size_t i = 0; i < left.size(); ++i) stereo.samples.insert(stereo.samples.end(), {left[i], right[i]});
  write_audio(dir.file("stereo.flac"), stereo, AudioFileFormat::Flac);
  const AudioBuffer decoded = read_audio(dir.file("stereo.flac"));
  EXPECT_EQ(decoded.channels, 2);
  const std::vector<float> mono = to_mono(decoded);
  ASSERT_EQ(mono.size(), left.size());
  for (size_t i = 0; i < mono.size(); ++i) EXPECT_NEAR(mono[i], (left[i] + right[i]) / 2, 1e-4) << i;
  EXPECT_EQ(to_mono(AudioBuffer{{1, 2, 3}, 8000, 1}), (std::vector<float>{1, 2, 3}));
}

TEST(AudioFile, LoadAudioMonoResamplesToTheTargetRate) {
  TempDir dir;
  write_wav(dir.file("a.wav"), sine(440, 44100, 44100), 44100);
  EXPECT_NEAR(static_cast<double>(load_audio_mono(dir.file("a.wav"), 16000).size()), 16000, 1);
  EXPECT_EQ(load_audio_mono(dir.file("a.wav"), 44100), sine(440, 44100, 44100));
  EXPECT_EQ(error_code_naming("a.wav", [&] { load_audio_mono(dir.file("a.wav"), 0); }), ErrorCode::InvalidArgument);
}

TEST(AudioFileErrors, MissingFile) {
  TempDir dir;
  EXPECT_EQ(error_code_naming("nothing.wav", [&] { read_audio(dir.file("nothing.wav")); }), ErrorCode::NotFound);
  EXPECT_EQ(error_code_naming(dir.path(), [&] { read_audio(dir.path()); }), ErrorCode::NotFound);  // a folder
}

TEST(AudioFileErrors, EmptyFile) {
  TempDir dir;
  const std::string path = dir.write("empty.wav", "");
  EXPECT_EQ(error_code_naming("empty.wav", [&] { read_audio(path); }), ErrorCode::InvalidFormat);
  EXPECT_EQ(error_code_naming("buffer.ogg", [&] { read_audio_from_memory("", 0, "buffer.ogg"); }),
            ErrorCode::InvalidFormat);
}

TEST(AudioFileErrors, TruncatedFiles) {
  TempDir dir;
  const std::vector<float> samples = sine(440, 16000, 16000);
  write_wav(dir.file("full.wav"), samples, 16000);
  write_audio(dir.file("full.flac"), AudioBuffer{samples, 16000, 1}, AudioFileFormat::Flac);
  const std::string wav = file_bytes(dir.file("full.wav")), flac = file_bytes(dir.file("full.flac"));
  // Cut inside the header, inside the WAV data chunk, inside the FLAC frames.
  const std::string header = dir.write("header.wav", wav.substr(0, 30));
  const std::string wav_body = dir.write("body.wav", wav.substr(0, wav.size() / 2));
  const std::string flac_body = dir.write("body.flac", flac.substr(0, flac.size() / 2));
  EXPECT_EQ(error_code_naming("header.wav", [&] { read_audio(header); }), ErrorCode::InvalidFormat);
  EXPECT_NE(error_message([&] { read_audio(wav_body); }).find("body.wav' is truncated"), std::string::npos);
  EXPECT_NE(error_message([&] { read_audio(flac_body); }).find("body.flac' is corrupt or truncated"),
            std::string::npos);
  EXPECT_EQ(error_code_naming("body.flac", [&] { read_audio(flac_body); }), ErrorCode::InvalidFormat);
}

TEST(AudioFile, StreamsCutBetweenPagesDecodeWhatIsThere) {
  // An Ogg stream without its end page has no known length (libsndfile reports SF_COUNT_MAX): like
  // a recording that was never closed, it decodes to the audio present, not an error.
  TempDir dir;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> noise(-0.25f, 0.25f);
  AudioBuffer audio_in{std::vector<float>(80000), 16000, 1};
  for (float& v : audio_in.samples) v = noise(rng);  // noise: pages spread evenly over the file
  write_audio(dir.file("long.ogg"), audio_in, AudioFileFormat::OggVorbis);
  const std::string bytes = file_bytes(dir.file("long.ogg"));
  const AudioBuffer audio = read_audio(dir.write("cut.ogg", bytes.substr(0, bytes.size() / 2)));
  EXPECT_GT(audio.frames(), 16000u);
  EXPECT_LT(audio.frames(), 80000u);
}

TEST(AudioFileErrors, CorruptBytes) {
  TempDir dir;
  write_audio(dir.file("good.flac"), AudioBuffer{sine(440, 16000, 16000), 16000, 1}, AudioFileFormat::Flac);
  std::string bytes = file_bytes(dir.file("good.flac"));
  for (size_t i = bytes.size() / 3; i < bytes.size() * 2 / 3; ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  const std::string path = dir.write("corrupt.flac", bytes);
  EXPECT_EQ(error_code_naming("corrupt.flac", [&] { read_audio(path); }), ErrorCode::InvalidFormat);
}

TEST(AudioFileErrors, UnsupportedFormat) {
  TempDir dir;
  const std::string path = dir.write("notes.wav", "these are words, not audio samples\n");
  EXPECT_EQ(error_code_naming("notes.wav", [&] { read_audio(path); }), ErrorCode::Unsupported);
  EXPECT_NE(error_message([&] { read_audio(path); }).find("not in a supported format"), std::string::npos);
}

TEST(AudioFileErrors, AbsurdDeclaredLength) {
  TempDir dir;
  write_audio(dir.file("small.flac"), AudioBuffer{sine(440, 16000, 1000), 16000, 1}, AudioFileFormat::Flac);
  std::string bytes = file_bytes(dir.file("small.flac"));
  // STREAMINFO (after "fLaC" and a 4-byte block header) holds a 36-bit total sample count in the
  // low nibble of byte 13 and bytes 14..17 of the block: claim 2^36 - 1 frames.
  bytes[8 + 13] = static_cast<char>(bytes[8 + 13] | 0x0F);
  for (int i = 14; i < 18; ++i) bytes[8 + i] = static_cast<char>(0xFF);
  const std::string path = dir.write("huge.flac", bytes);
  EXPECT_EQ(error_code_naming("huge.flac", [&] { read_audio(path); }), ErrorCode::ResourceExhausted);
}

TEST(AudioFileErrors, NonFiniteSamplesInAFloatWav) {
  TempDir dir;
  AudioBuffer audio{{0.1f, 0.2f, 0.3f, 0.4f}, 16000, 1};
  write_wav(dir.file("ok.wav"), audio.samples, 16000);
  std::string bytes = file_bytes(dir.file("ok.wav"));
  const float nan = std::nanf("");
  bytes.replace(bytes.size() - 4, 4, reinterpret_cast<const char*>(&nan), 4);  // last sample
  const std::string path = dir.write("nan.wav", bytes);
  EXPECT_EQ(error_code_naming("nan.wav", [&] { read_audio(path); }), ErrorCode::InvalidFormat);
}

TEST(AudioFileErrors, BadRawSamples) {
  TempDir dir;
  const std::string path = dir.file("out.wav");
  EXPECT_NE(error_message([&] {
              write_wav(path, {0.0f, NAN}, 16000);
            }).find("out.wav': samples[1] is not finite"),
            std::string::npos);
  EXPECT_NE(error_message([&] { write_wav(path, {0.0f}, 0); }).find("out.wav': sample_rate 0 must be positive"),
            std::string::npos);
  EXPECT_NE(error_message([&] { write_wav(path, {}, 16000); }).find("out.wav': samples is empty"), std::string::npos);
  EXPECT_EQ(error_code_naming("channels 0",
                              [] {
                                to_mono(AudioBuffer{{1.0f}, 16000, 0});
                              }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code_naming("do not split into 2 channels",
                              [] {
                                to_mono(AudioBuffer{{1.0f}, 16000, 2});
                              }),
            ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace izwi
