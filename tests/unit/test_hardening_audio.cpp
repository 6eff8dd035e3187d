// Sample rates far from audio's (a WAV header saying 1 Hz) would make resampling to 16 kHz
// produce thousands of times the input: rates are bounded, and so is the resampled length.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "audio/sample_checks.h"
#include "audio/streaming_resampler.h"
#include "common/error_message.h"
#include "common/float_wav.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;

// A mono 16-bit PCM WAV of `frames` zero samples whose header claims `rate` Hz.
std::string wav_bytes(uint32_t rate, uint32_t frames) {
  return testing::mono_wav_bytes(1, 16, rate, std::string(frames * 2, '\0'));
}

TEST(HardeningAudio, WavAtOneHertzIsRejectedNamingFileAndRate) {
  TempDir dir;
  const std::string path = dir.write("slow.wav", wav_bytes(1, 400));
  for (auto fn : std::vector<std::function<void()>>{[&] { read_audio(path); }, [&] { load_audio_mono(path, 16000); }}) {
    const std::string message = error_message(fn);
    EXPECT_EQ(error_code_of(fn), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find("slow.wav"), std::string::npos) << message;
    EXPECT_NE(message.find("1 Hz"), std::string::npos) << message;
  }
  const std::string bytes = wav_bytes(999, 100);
  const std::string message = error_message([&] { read_audio_from_memory(bytes.data(), bytes.size(), "mem.wav"); });
  EXPECT_NE(message.find("mem.wav"), std::string::npos) << message;
  EXPECT_NE(message.find("999 Hz"), std::string::npos) << message;
}

TEST(HardeningAudio, WavAtTheRateBoundsStillReads) {
  TempDir dir;
  EXPECT_EQ(read_audio(dir.write("a.wav", wav_bytes(1000, 100))).sample_rate, 1000);
  EXPECT_EQ(read_audio(dir.write("b.wav", wav_bytes(768000, 100))).sample_rate, 768000);
  EXPECT_EQ(error_code_of([&] { read_audio(dir.write("c.wav", wav_bytes(768001, 100))); }), ErrorCode::InvalidFormat);
}

TEST(HardeningAudio, PushedRatesAreBounded) {
  // check_sample_rate is what push_audio, resample and StreamingResampler share.
  for (int rate : {1, 999, 768001, 1 << 30}) {
    const std::string message = error_message([&] { check_sample_rate(rate, "sample_rate", "push_audio"); });
    EXPECT_EQ(error_code_of([&] { check_sample_rate(rate, "sample_rate", "push_audio"); }), ErrorCode::InvalidArgument);
    EXPECT_NE(message.find("push_audio: sample_rate " + std::to_string(rate)), std::string::npos) << message;
    EXPECT_NE(message.find("[1000, 768000]"), std::string::npos) << message;
    EXPECT_EQ(error_code_of([&] { StreamingResampler(rate, 16000); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(error_code_of([&] { resample({0.0f}, rate, 16000); }), ErrorCode::InvalidArgument);
  }
  EXPECT_NO_THROW(check_sample_rate(1000, "sample_rate", "push_audio"));
  EXPECT_NO_THROW(check_sample_rate(768000, "sample_rate", "push_audio"));
  // The old messages for non-positive rates stay.
  EXPECT_NE(
      error_message([] { check_sample_rate(0, "sample_rate", "ctx"); }).find("ctx: sample_rate 0 must be positive"),
      std::string::npos);
}

TEST(HardeningAudio, ResampledLengthIsBounded) {
  EXPECT_EQ(max_resampled_samples(1000, 1000, 768000), size_t{768000});
  EXPECT_EQ(error_code_of([] { check_resampled_length(kMaxAudioSamples, 1000, 16000, "resample"); }),
            ErrorCode::ResourceExhausted);
  EXPECT_NO_THROW(check_resampled_length(kMaxAudioSamples, 16000, 16000, "resample"));
  EXPECT_NO_THROW(check_resampled_length(kMaxAudioSamples, 48000, 16000, "resample"));
}

// A float file of 1e30 samples is finite but not audio: every log-mel squares it to Inf, and an
// x-vector of nulls came out. The reader refuses it naming the file and the frame.
TEST(HardeningAudio, HugeFloatSamplesAreRejectedNamingFileAndFrame) {
  TempDir dir;
  for (const float bad : {1e30f, -70000.0f, std::nanf("")}) {
    const std::string path = dir.write("loud.wav", testing::float_wav_bytes({0.1f, 0.2f, bad, 0.3f}, 24000));
    for (auto fn :
         std::vector<std::function<void()>>{[&] { read_audio(path); }, [&] { load_audio_mono(path, 24000); }}) {
      const std::string message = error_message(fn);
      EXPECT_EQ(error_code_of(fn), ErrorCode::InvalidFormat) << message;
      EXPECT_NE(message.find("loud.wav' holds an unusable sample at frame 2"), std::string::npos) << message;
    }
  }
  const std::string edge =
      dir.write("edge.wav", testing::float_wav_bytes({kMaxSampleMagnitude, -kMaxSampleMagnitude}, 24000));
  EXPECT_EQ(read_audio(edge).samples, (std::vector<float>{kMaxSampleMagnitude, -kMaxSampleMagnitude}));
}

TEST(HardeningAudio, HugeSamplesInMemoryAreRejected) {
  const std::vector<float> loud = {0.5f, 1e30f};
  auto fn = [&] { resample(loud, 16000, 24000); };
  EXPECT_EQ(error_code_of(fn), ErrorCode::InvalidArgument);
  EXPECT_NE(error_message(fn).find("resample: samples[1] is 1e+30, beyond"), std::string::npos) << error_message(fn);
  EXPECT_EQ(first_unusable_sample(loud.data(), 1), std::nullopt);
}

}  // namespace
}  // namespace izwi
