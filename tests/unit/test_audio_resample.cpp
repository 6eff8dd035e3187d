// Resampling: lengths follow the rate ratio, a tone keeps its frequency and level, the streaming
// resampler gives the same samples for any chunking, and bad raw input is rejected by name.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "audio/streaming_resampler.h"
#include "common/error_message.h"
#include "common/signals.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

using testing::error_message;
using testing::sine;

// Frequency from the rising zero crossings between the first and last one in [begin, end).
double measured_frequency(const std::vector<float>& x, int rate, size_t begin, size_t end) {
  double first = -1, last = -1;
  int crossings = 0;
  for (size_t i = begin + 1; i < end; ++i) {
    if (x[i - 1] < 0 && x[i] >= 0) {
      const double t = (i - 1) + x[i - 1] / (x[i - 1] - x[i]);  // linear interpolation
      if (first < 0) first = t;
      last = t;
      ++crossings;
    }
  }
  return (crossings - 1) * rate / (last - first);
}

double rms(const std::vector<float>& x, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += x[i] * x[i];
  return std::sqrt(sum / static_cast<double>(end - begin));
}

TEST(Resample, LengthFollowsTheRateRatio) {
  EXPECT_NEAR(static_cast<double>(resample(sine(440, 44100, 44100), 44100, 16000).size()), 16000, 1);
  EXPECT_NEAR(static_cast<double>(resample(sine(440, 8000, 12345), 8000, 16000).size()), 24690, 1);
  EXPECT_EQ(resample(sine(440, 16000, 999), 16000, 16000), sine(440, 16000, 999));  // equal rates: a copy
}

TEST(Resample, ToneKeepsItsFrequencyAndLevel) {
  const std::vector<float> out = resample(sine(1000, 44100, 44100), 44100, 16000);
  // Away from the edges, where the filter sees the signal start and stop.
  EXPECT_NEAR(measured_frequency(out, 16000, 800, 15200), 1000.0, 0.05);
  EXPECT_NEAR(rms(out, 800, 15200), 0.5 / std::sqrt(2.0), 1e-3);
}

TEST(Resample, ContentAboveTheNewNyquistIsRemoved) {
  const std::vector<float> out = resample(sine(10000, 44100, 44100), 44100, 16000);  // above 8 kHz
  EXPECT_LT(rms(out, 800, 15200), 1e-3);
}

TEST(StreamingResampler, AnyChunkingGivesTheSameSamples) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> noise(-0.5f, 0.5f);
  std::vector<float> x(44100 + 77);
  for (float& v : x) v = noise(rng);
  const std::vector<float> whole = resample(x, 44100, 16000);
  for (int chunk : {1, 100, 441, 4410, -1}) {
    StreamingResampler resampler(44100, 16000);
    std::vector<float> out;
    for (size_t at = 0; at < x.size();) {
      const size_t n = std::min(x.size() - at, chunk > 0 ? static_cast<size_t>(chunk) : rng() % 5000);
      const std::vector<float> piece = resampler.push(x.data() + at, n);
      out.insert(out.end(), piece.begin(), piece.end());
      at += n;
    }
    const std::vector<float> tail = resampler.flush();
    out.insert(out.end(), tail.begin(), tail.end());
    // soxr queues input and filters it in its own blocks, so chunking leaves the arithmetic alone.
    EXPECT_EQ(out, whole) << "chunk " << chunk;
  }
}

TEST(StreamingResampler, FlushStartsANewStream) {
  const std::vector<float> x = sine(440, 48000, 4800);
  StreamingResampler resampler(48000, 16000);
  std::vector<float> first = resampler.push(x.data(), x.size());
  std::vector<float> tail = resampler.flush();
  first.insert(first.end(), tail.begin(), tail.end());
  std::vector<float> second = resampler.push(x.data(), x.size());
  tail = resampler.flush();
  second.insert(second.end(), tail.begin(), tail.end());
  EXPECT_EQ(first, second);
}

TEST(ResampleErrors, BadRawInputNamesTheParameter) {
  EXPECT_NE(error_message([] {
              resample({0.0f, 0.1f, NAN}, 44100, 16000);
            }).find("resample: samples[2] is not finite"),
            std::string::npos);
  EXPECT_NE(error_message([] {
              resample({0.0f, INFINITY}, 44100, 16000);
            }).find("samples[1] is not finite"),
            std::string::npos);
  EXPECT_NE(error_message([] { resample({0.0f}, 0, 16000); }).find("resample: from_rate 0 must be positive"),
            std::string::npos);
  EXPECT_NE(error_message([] { resample({0.0f}, 16000, -8000); }).find("resample: to_rate -8000 must be positive"),
            std::string::npos);
  EXPECT_NE(error_message([] { resample({}, 44100, 16000); }).find("resample: samples is empty"), std::string::npos);
  EXPECT_NE(error_message([] { StreamingResampler(44100, 0); }).find("out_rate 0 must be positive"), std::string::npos);
  const float nan[] = {NAN};
  EXPECT_NE(error_message([&] {
              StreamingResampler(44100, 16000).push(nan, 1);
            }).find("StreamingResampler::push: samples[0] is not finite"),
            std::string::npos);
}

}  // namespace
}  // namespace izwi
