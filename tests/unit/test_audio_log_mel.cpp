// The log-mel frontend: Slaney filter properties, frame counts and floors, and streaming features
// equal to the offline ones for lengths around every boundary (reflect padding at both ends, the
// dropped last frame) and any chunking. Parity with transformers is in tests/parity.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "audio/log_mel.h"
#include "audio/mel_filter_bank.h"
#include "audio/streaming_log_mel.h"
#include "common/error_message.h"
#include "common/reference.h"

namespace izwi {
namespace {

using testing::error_message;
using testing::max_abs_diff;

std::vector<float> noise(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> out(count);
  for (float& v : out) v = normal(rng);
  return out;
}

at::Tensor as_tensor(const std::vector<float>& x) {
  return at::from_blob(const_cast<float*>(x.data()), {static_cast<int64_t>(x.size())}, at::kFloat).clone();
}

at::Tensor streamed(const std::vector<float>& x, size_t chunk, const LogMelConfig& config) {
  StreamingLogMel streaming(config);
  std::vector<at::Tensor> pieces;
  for (size_t at = 0; at < x.size(); at += chunk)
    pieces.push_back(streaming.push(x.data() + at, std::min(chunk, x.size() - at)));
  pieces.push_back(streaming.finish());
  return at::cat(pieces, 1);
}

TEST(MelFilterBank, SlaneyFiltersAreTrianglesOfUnitArea) {
  const at::Tensor filters = mel_filter_bank(201, 128, 0.0, 8000.0, 16000);
  ASSERT_EQ(filters.sizes(), (at::IntArrayRef{201, 128}));
  EXPECT_GE(filters.min().item<float>(), 0.0f);
  EXPECT_TRUE((filters.amax(0) > 0).all().item<bool>());  // no empty filter
  // Each triangle has unit area over Hz; summed over 40 Hz bins that holds for the wide top
  // filters (the narrow low ones span only a bin or two). Peaks move up the spectrum.
  const at::Tensor area = filters.sum(0) * 40.0;
  EXPECT_LT((area.narrow(0, 96, 32) - 1.0).abs().max().item<float>(), 0.05);
  const at::Tensor peaks = filters.argmax(0);
  EXPECT_TRUE((peaks.narrow(0, 1, 127) >= peaks.narrow(0, 0, 127)).all().item<bool>());
}

TEST(LogMel, FrameCountAndFloor) {
  const LogMelConfig config;
  for (size_t n : {201, 320, 1280, 1281, 16000}) {
    const at::Tensor mel = log_mel_spectrogram(as_tensor(noise(n, 1)), config);
    EXPECT_EQ(mel.sizes(), (at::IntArrayRef{128, static_cast<int64_t>(n / 160)})) << n;
  }
  // Silence sits at the floor: (global_log_mel_max - 8 + 4) / 4.
  const at::Tensor silence = log_mel_spectrogram(at::zeros({1600}), config);
  EXPECT_TRUE(at::allclose(silence, at::full_like(silence, (1.5 - 8 + 4) / 4)));
}

TEST(LogMel, RejectsUnusableInput) {
  EXPECT_NE(error_message([] {
              log_mel_spectrogram(at::zeros({200}), LogMelConfig{});
            }).find("log_mel_spectrogram: 200 samples; the log-mel frontend needs more than n_fft / 2 = 200"),
            std::string::npos);
  EXPECT_NE(error_message([] {
              log_mel_spectrogram(at::zeros({2, 800}), LogMelConfig{});
            }).find("must be 1-D"),
            std::string::npos);
  LogMelConfig bad;
  bad.hop = 0;
  EXPECT_NE(error_message([&] { log_mel_spectrogram(at::zeros({800}), bad); }).find("hop 0"), std::string::npos);
}

TEST(StreamingLogMel, EqualsOfflineAtEveryBoundary) {
  LogMelConfig long_hop;  // hop > n_fft / 2: a frame can be complete yet still be the dropped one
  long_hop.n_fft = 64;
  long_hop.hop = 48;
  long_hop.n_mels = 8;
  for (const LogMelConfig& config : {LogMelConfig{}, long_hop}) {
    const size_t half = config.n_fft / 2;
    for (size_t n : {half + 1, half + 50, size_t(399), size_t(400), size_t(1280), size_t(1281), size_t(4037)}) {
      const std::vector<float> x = noise(n, static_cast<uint32_t>(n));
      const at::Tensor offline = log_mel_spectrogram(as_tensor(x), config);
      for (size_t chunk : {size_t(1), size_t(37), size_t(160), size_t(1280), n}) {
        const at::Tensor s = streamed(x, chunk, config);
        ASSERT_EQ(s.sizes(), offline.sizes()) << "n " << n << " chunk " << chunk << " n_fft " << config.n_fft;
        if (offline.numel() > 0)
          EXPECT_LT(max_abs_diff(s, offline), 1e-5) << "n " << n << " chunk " << chunk << " n_fft " << config.n_fft;
      }
    }
  }
}

TEST(StreamingLogMel, FramesLeaveAsSoonAsTheirWindowIsFull) {
  // A frame centred on sample t * 160 needs samples up to t * 160 + 199: 80 ms of audio yields 7
  // frames at once, the 8th with the next chunk.
  StreamingLogMel streaming{LogMelConfig{}};
  const std::vector<float> x = noise(1280 * 3, 5);
  int64_t frames = 0;
  for (int k = 0; k < 3; ++k) {
    frames += streaming.push(x.data() + 1280 * k, 1280).size(1);
    EXPECT_EQ(frames, (1280 * (k + 1) - 200) / 160 + 1);
  }
  EXPECT_EQ(frames + streaming.finish().size(1), 24);
}

TEST(StreamingLogMel, RejectsBadUse) {
  StreamingLogMel streaming{LogMelConfig{}};
  const float bad[] = {0.0f, NAN};
  EXPECT_NE(error_message([&] { streaming.push(bad, 2); }).find("StreamingLogMel::push: samples[1] is not finite"),
            std::string::npos);
  const std::vector<float> few(200, 0.1f);
  streaming.push(few.data(), few.size());
  EXPECT_NE(error_message([&] { streaming.finish(); }).find("200 samples"), std::string::npos);
  EXPECT_NE(error_message([&] { streaming.finish(); }).find("called twice"), std::string::npos);
  EXPECT_NE(error_message([&] { streaming.push(few.data(), 1); }).find("push after finish"), std::string::npos);
}

}  // namespace
}  // namespace izwi
