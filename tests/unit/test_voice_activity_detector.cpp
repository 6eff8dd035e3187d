// The realtime server's turn detector (src/audio/voice_activity_detector.h): harmonic,
// syllable-modulated "speech" opens a turn and silence after it closes the turn at the
// configured duration, with the start padded; loud white noise, near-silence and a single
// click do not; a pause shorter than the silence duration keeps one turn; the tests/data WAV
// (a tonal signal, the nearest to speech the fixtures hold) is speech; bad options are named.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "audio/voice_activity_detector.h"
#include "common/error_message.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

using testing::error_message;
using Kind = VadEvent::Kind;

constexpr int kRate = 24000;

/// A voiced vowel train: f0 130 Hz with 12 falling harmonics, its level moving at a syllable rate
/// of 4 Hz, peak about `amplitude`.
std::vector<float> speech_like(double seconds, float amplitude = 0.2f) {
  std::vector<float> out(static_cast<size_t>(seconds * kRate));
  for (size_t i = 0; i < out.size(); ++i) {
    const double t = static_cast<double>(i) / kRate;
    double v = 0;
    for (int h = 1; h <= 12; ++h) v += std::sin(2 * M_PI * 130 * h * t + h) / h;
    out[i] = static_cast<float>(amplitude / 3 * (0.6 + 0.4 * std::sin(2 * M_PI * 4 * t)) * v);
  }
  return out;
}

std::vector<float> noise(double seconds, float rms, uint32_t seed = 1) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, rms);
  std::vector<float> out(static_cast<size_t>(seconds * kRate));
  for (float& s : out) s = dist(gen);
  return out;
}

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// Pushes `audio` in 100 ms pieces, as a client appends it.
std::vector<VadEvent> detect(VoiceActivityDetector& vad, const std::vector<float>& audio) {
  std::vector<VadEvent> events;
  for (size_t i = 0; i < audio.size(); i += kRate / 10) {
    const size_t n = std::min<size_t>(kRate / 10, audio.size() - i);
    for (const VadEvent& e : vad.push(audio.data() + i, n)) events.push_back(e);
  }
  return events;
}

constexpr int64_t kFrame = kRate / 50;

TEST(VoiceActivityDetector, SpeechSilenceSpeechGivesTwoPaddedTurns) {
  VadOptions options;
  options.prefix_padding_ms = 200;
  options.silence_duration_ms = 500;
  VoiceActivityDetector vad(options, kRate);
  const std::vector<float> audio =
      concat({noise(1.0, 1e-4f), speech_like(1.0), noise(1.0, 1e-4f, 2), speech_like(0.8), noise(1.0, 1e-4f, 3)});
  const std::vector<VadEvent> events = detect(vad, audio);
  ASSERT_EQ(events.size(), 4u);
  const Kind kinds[] = {Kind::SpeechStarted, Kind::SpeechStopped, Kind::SpeechStarted, Kind::SpeechStopped};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(events[i].kind, kinds[i]) << i;
  // Onsets at 1.0 s and 3.0 s, reported 200 ms early; ends at 2.0 s and 3.8 s (within a frame).
  EXPECT_NEAR(events[0].sample, kRate * 1.0 - kRate * 0.2, kFrame);
  EXPECT_NEAR(events[1].sample, kRate * 2.0, kFrame);
  EXPECT_NEAR(events[2].sample, kRate * 3.0 - kRate * 0.2, kFrame);
  EXPECT_NEAR(events[3].sample, kRate * 3.8, kFrame);
  EXPECT_FALSE(vad.in_speech());
}

TEST(VoiceActivityDetector, TheStopComesAfterTheSilenceDuration) {
  for (const int silence_ms : {200, 800}) {
    VadOptions options;
    options.silence_duration_ms = silence_ms;
    VoiceActivityDetector vad(options, kRate);
    const std::vector<float> speech = speech_like(1.0);
    ASSERT_EQ(detect(vad, speech).size(), 1u);
    // Silence one frame short of the duration: still in the turn; the next frame ends it.
    const std::vector<float> almost(static_cast<size_t>(silence_ms - 20) * kRate / 1000, 0.0f);
    EXPECT_TRUE(detect(vad, almost).empty()) << silence_ms;
    EXPECT_TRUE(vad.in_speech());
    const std::vector<float> frame(kFrame, 0.0f);
    const std::vector<VadEvent> stop = detect(vad, frame);
    ASSERT_EQ(stop.size(), 1u) << silence_ms;
    EXPECT_EQ(stop[0].kind, Kind::SpeechStopped);
  }
}

TEST(VoiceActivityDetector, APauseShorterThanTheSilenceDurationKeepsOneTurn) {
  VadOptions options;
  options.silence_duration_ms = 600;
  VoiceActivityDetector vad(options, kRate);
  const std::vector<VadEvent> events =
      detect(vad, concat({speech_like(0.7), noise(0.4, 1e-4f), speech_like(0.7), noise(1.0, 1e-4f)}));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, Kind::SpeechStarted);
  EXPECT_EQ(events[0].sample, 0);  // padding stops at the first sample
  EXPECT_NEAR(events[1].sample, kRate * 1.8, kFrame);
}

TEST(VoiceActivityDetector, NoiseSilenceAndAClickAreNotSpeech) {
  VoiceActivityDetector vad(VadOptions{}, kRate);
  EXPECT_TRUE(detect(vad, noise(2.0, 0.2f)).empty()) << "loud white noise is flat, not speech";
  EXPECT_TRUE(detect(vad, noise(2.0, 5e-4f)).empty()) << "-66 dBFS is too quiet";
  std::vector<float> click(kRate, 0.0f);
  for (int i = 0; i < kFrame; ++i) click[kRate / 2 + i] = 0.5f * std::sin(2 * M_PI * 440 * i / kRate);
  EXPECT_TRUE(detect(vad, click).empty()) << "one loud frame does not open a turn";
  EXPECT_LT(VoiceActivityDetector::speech_probability(noise(0.02, 0.2f).data(), kFrame, kRate), 0.5f);
  const std::vector<float> voiced = speech_like(0.02);
  EXPECT_GT(VoiceActivityDetector::speech_probability(voiced.data(), kFrame, kRate), 0.9f);
}

TEST(VoiceActivityDetector, AHigherThresholdNeedsLouderSpeech) {
  const std::vector<float> quiet = concat({speech_like(1.0, 0.03f), noise(1.0, 1e-5f)});
  VadOptions low;
  low.threshold = 0.2f;
  VoiceActivityDetector lenient(low, kRate);
  EXPECT_EQ(detect(lenient, quiet).size(), 2u);
  VadOptions high;
  high.threshold = 0.9f;
  VoiceActivityDetector strict(high, kRate);
  EXPECT_TRUE(detect(strict, quiet).empty());
}

TEST(VoiceActivityDetector, TheFixtureWavIsSpeechBetweenSilences) {
  const AudioBuffer wav = read_audio(std::string(IZWI_TEST_DATA_DIR) + "/lfm2-audio-tiny/audio.wav");
  const std::vector<float> samples = to_mono(wav);
  const int rate = wav.sample_rate;
  std::vector<float> audio(static_cast<size_t>(rate), 0.0f);
  audio.insert(audio.end(), samples.begin(), samples.end());
  audio.insert(audio.end(), static_cast<size_t>(rate), 0.0f);
  VadOptions options;
  options.prefix_padding_ms = 0;
  VoiceActivityDetector vad(options, rate);
  const std::vector<VadEvent> events = vad.push(audio.data(), audio.size());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NEAR(events[0].sample, rate, rate / 50);
  EXPECT_NEAR(events[1].sample, rate + static_cast<int64_t>(samples.size()), rate / 50);
}

TEST(VoiceActivityDetector, BadOptionsAreNamed) {
  VadOptions threshold;
  threshold.threshold = 1.5f;
  EXPECT_NE(error_message([&] { VoiceActivityDetector(threshold, kRate); }).find("threshold"), std::string::npos);
  VadOptions padding;
  padding.prefix_padding_ms = -1;
  EXPECT_NE(error_message([&] { VoiceActivityDetector(padding, kRate); }).find("prefix_padding_ms"), std::string::npos);
  VadOptions silence;
  silence.silence_duration_ms = -5;
  EXPECT_NE(error_message([&] { VoiceActivityDetector(silence, kRate); }).find("silence_duration_ms"),
            std::string::npos);
  EXPECT_NE(error_message([] { VoiceActivityDetector(VadOptions{}, 4000); }).find("rate"), std::string::npos);
}

}  // namespace
}  // namespace izwi
