// The audio frontend against transformers (fixture voxtral-realtime-tiny): the WAV decodes to the
// reference waveform bit for bit, and its log-mel features, offline and streamed in chunks of any
// size, match the reference extractor's `mel_full`. The features are computed on IZWI_TEST_DEVICE.

#include <gtest/gtest.h>

#include <random>

#include "audio/log_mel.h"
#include "audio/streaming_log_mel.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr double kReferenceTolerance = 1e-4;
constexpr double kStreamingTolerance = 1e-5;

class LogMelParity : public ::testing::Test {
 protected:
  LogMelParity() : ref_("voxtral-realtime-tiny") {}
  at::Tensor waveform() const { return ref_.get("waveform_16k").to(at::kFloat); }
  testing::ReferenceTensors ref_;
};

TEST_F(LogMelParity, WavDecodesToTheReferenceWaveformExactly) {
  const AudioBuffer audio = read_audio(testing::fixture_dir("voxtral-realtime-tiny") + "/audio.wav");
  EXPECT_EQ(audio.sample_rate, 16000);
  EXPECT_EQ(audio.channels, 1);
  const at::Tensor decoded =
      at::from_blob(const_cast<float*>(audio.samples.data()), {static_cast<int64_t>(audio.samples.size())}, at::kFloat);
  EXPECT_TRUE(at::equal(decoded, waveform()));
}

TEST_F(LogMelParity, OfflineMatchesReference) {
  const at::Tensor mel = log_mel_spectrogram(waveform().to(testing::test_device()), LogMelConfig{});
  EXPECT_EQ(mel.device(), testing::test_device());
  const at::Tensor expected = ref_.get("mel_full");
  ASSERT_EQ(mel.sizes(), expected.sizes());
  const double diff = max_abs_diff(mel, expected);
  RecordProperty("max_abs_diff", std::to_string(diff));
  std::printf("log-mel vs reference mel_full [%lld, %lld]: max abs diff %.3g\n",
              static_cast<long long>(expected.size(0)), static_cast<long long>(expected.size(1)), diff);
  EXPECT_LT(diff, kReferenceTolerance);
  // The model input is mel_full cut to whole audio positions (8 frames each).
  const at::Tensor model_input = ref_.get("mel");
  EXPECT_LT(max_abs_diff(mel.narrow(1, 0, model_input.size(1)), model_input), kReferenceTolerance);
}

TEST_F(LogMelParity, StreamingMatchesOfflineForAnyChunking) {
  const at::Tensor wave = waveform().contiguous();
  const at::Tensor offline = log_mel_spectrogram(wave.to(testing::test_device()), LogMelConfig{});
  const float* samples = wave.data_ptr<float>();
  const auto total = static_cast<size_t>(wave.numel());
  std::mt19937 rng(7);
  // 1 sample, 37 ms, 80 ms (one audio position), 1 s, and random sizes from 0 to 3000 (-1).
  for (int chunk : {1, 592, 1280, 16000, -1}) {
    StreamingLogMel streaming{LogMelConfig{}, testing::test_device()};  // the samples cross once
    std::vector<at::Tensor> pieces;
    for (size_t at = 0; at < total;) {
      const size_t n = std::min(total - at, chunk > 0 ? static_cast<size_t>(chunk) : rng() % 3001);
      pieces.push_back(streaming.push(samples + at, n));
      at += n;
    }
    pieces.push_back(streaming.finish());
    const at::Tensor streamed = at::cat(pieces, 1);
    EXPECT_EQ(streamed.device(), testing::test_device());
    ASSERT_EQ(streamed.sizes(), offline.sizes()) << "chunk " << chunk;
    const double diff = max_abs_diff(streamed, offline);
    std::printf("streamed in chunks of %d samples vs offline: max abs diff %.3g\n", chunk, diff);
    EXPECT_LT(diff, kStreamingTolerance) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(streamed, ref_.get("mel_full")), kReferenceTolerance) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace izwi
