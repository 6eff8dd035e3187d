// The Qwen3-TTS Base speaker encoder against the released code (fixture
// qwen3-tts-speaker-encoder-tiny): the log-mel and the x-vector of three reference clips, from the
// raw waveform, from the reference mel and through a WAV file; typed errors for bad input.

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "izwi/audio.h"
#include "izwi/errors.h"
#include "models/qwen3_tts/speaker_encoder.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

const char* const kFixture = "qwen3-tts-speaker-encoder-tiny";
// The fixture's tolerances (reference.json): each at least 10x the float32-vs-float64 difference.
constexpr double kMelMaxAbs = 1e-2, kMelMeanAbs = 5e-5, kXvectorMaxAbs = 2e-4;

class SpeakerEncoderParity : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    ref_ = new testing::ReferenceTensors(kFixture);
    encoder_ = new SpeakerEncoder(load_speaker_encoder(testing::fixture_dir(kFixture), testing::test_backend()));
  }
  static void TearDownTestSuite() {
    delete encoder_;
    delete ref_;
  }
  at::Tensor ref(const std::string& what) const {
    return ref_->get("case" + std::to_string(GetParam()) + "." + what).to(at::kFloat);
  }

  static testing::ReferenceTensors* ref_;
  static SpeakerEncoder* encoder_;
};

testing::ReferenceTensors* SpeakerEncoderParity::ref_ = nullptr;
SpeakerEncoder* SpeakerEncoderParity::encoder_ = nullptr;

TEST_P(SpeakerEncoderParity, MelMatchesTheReleasedCode) {
  const at::Tensor mel = encoder_->mel(ref("waveform_24k"));
  const at::Tensor expected = ref("mel");
  ASSERT_EQ(mel.sizes(), expected.sizes());
  EXPECT_LE(max_abs_diff(mel, expected), kMelMaxAbs);
  EXPECT_LE((mel - expected).abs().mean().item<double>(), kMelMeanAbs);
}

TEST_P(SpeakerEncoderParity, XvectorFromReferenceMelAndFromWaveform) {
  const at::Tensor expected = ref("xvector");
  const at::Tensor from_mel = encoder_->embed_mel(ref("mel"));
  ASSERT_EQ(from_mel.sizes(), expected.sizes());
  EXPECT_LE(max_abs_diff(from_mel, expected), kXvectorMaxAbs);
  EXPECT_LE(max_abs_diff(encoder_->embed(ref("waveform_24k")), expected), kXvectorMaxAbs);
}

TEST_P(SpeakerEncoderParity, XvectorThroughAWavFile) {
  const at::Tensor wave = ref("waveform_24k").contiguous();
  testing::TempDir dir;
  const std::string path = dir.file("reference.wav");
  write_wav(path, std::vector<float>(wave.data_ptr<float>(), wave.data_ptr<float>() + wave.numel()), 24000);
  const std::vector<float> read = load_audio_mono(path, encoder_->config().sample_rate);
  const at::Tensor x = encoder_->embed(at::tensor(read));
  EXPECT_LE(max_abs_diff(x, ref("xvector")), kXvectorMaxAbs);
}

INSTANTIATE_TEST_SUITE_P(Cases, SpeakerEncoderParity, ::testing::Values(0, 1, 2));

// libtorch's ops (the path a CUDA backend takes where it has no kernel of its own), float32.
TEST(SpeakerEncoderParityLibtorchOps, XvectorMatchesTheReleasedCode) {
  const Backend torch = Backend::reference(testing::test_device(), at::kFloat);
  const testing::ReferenceTensors ref(kFixture);
  const SpeakerEncoder encoder = load_speaker_encoder(testing::fixture_dir(kFixture), torch);
  for (int c = 0; c < 3; ++c) {
    const std::string k = "case" + std::to_string(c) + ".";
    const at::Tensor expected = ref.get(k + "xvector").to(at::kFloat);
    EXPECT_LE(max_abs_diff(encoder.embed_mel(ref.get(k + "mel").to(at::kFloat)), expected), kXvectorMaxAbs) << k;
    EXPECT_LE(max_abs_diff(encoder.embed(ref.get(k + "waveform_24k").to(at::kFloat)), expected), kXvectorMaxAbs) << k;
  }
}

// bf16, the dtype a GPU serves in, on the test device: the x-vector from the reference mel against
// the released one. Measured on the CPU (libtorch's bf16 ops): max abs 0.041-0.055 over the three
// cases (entries up to 0.8-1.5); about 3x that allowed. Not yet measured on a GPU.
constexpr double kXvectorBf16MaxAbs = 0.15;

TEST(SpeakerEncoderParityBf16, XvectorWithinTheBf16Tolerance) {
  const Backend& bf16 = testing::test_bf16_backend();
  const testing::ReferenceTensors ref(kFixture);
  const SpeakerEncoder encoder = load_speaker_encoder(testing::fixture_dir(kFixture), bf16);
  for (int c = 0; c < 3; ++c) {
    const std::string k = "case" + std::to_string(c) + ".";
    const at::Tensor x = encoder.embed_mel(ref.get(k + "mel").to(at::kFloat));
    EXPECT_EQ(x.scalar_type(), at::kFloat);
    const at::Tensor expected = ref.get(k + "xvector").to(at::kFloat);
    const double diff = max_abs_diff(x, expected);
    std::printf("speaker encoder bf16 vs the released x-vector, %s: max abs %.3g (its largest entry %.3g)\n", k.c_str(),
                diff, expected.abs().max().item<double>());
    EXPECT_LE(diff, kXvectorBf16MaxAbs) << k;
  }
}

TEST(SpeakerEncoderErrors, ShortSilentAndMissingInputAreClearErrors) {
  const SpeakerEncoder encoder = load_speaker_encoder(testing::fixture_dir(kFixture));
  const auto short_audio = [&] { encoder.embed(at::randn({11999}) * 0.1); };
  EXPECT_EQ(testing::error_code_of(short_audio), ErrorCode::InvalidArgument);
  EXPECT_NE(testing::error_message(short_audio).find("at least 0.5 s"), std::string::npos)
      << testing::error_message(short_audio);
  const auto silent = [&] { encoder.embed(at::zeros({48000})); };
  EXPECT_EQ(testing::error_code_of(silent), ErrorCode::InvalidArgument);
  EXPECT_NE(testing::error_message(silent).find("silent"), std::string::npos) << testing::error_message(silent);
  const auto wrong_mel = [&] { encoder.embed_mel(at::zeros({50, 80})); };
  EXPECT_EQ(testing::error_code_of(wrong_mel), ErrorCode::InvalidArgument);

  // A folder without a speaker encoder (CustomVoice) names the missing section.
  const auto custom_voice = [] { load_speaker_encoder(testing::fixture_dir("qwen3-tts-tiny")); };
  EXPECT_EQ(testing::error_code_of(custom_voice), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message(custom_voice).find("tts_model_type is 'custom_voice'"), std::string::npos)
      << testing::error_message(custom_voice);
  const auto missing = [] { load_speaker_encoder("/no/such/folder"); };
  EXPECT_EQ(testing::error_code_of(missing), ErrorCode::NotFound) << testing::error_message(missing);
}

TEST(SpeakerEncoderErrors, BadConfigNamesTheField) {
  testing::TempDir dir;
  nlohmann::json config = {
      {"model_type", "qwen3_tts"},
      {"speaker_encoder_config", {{"enc_channels", {32, 32, 30, 32, 96}}, {"enc_res2net_scale", 4}}}};
  dir.write("config.json", config.dump());
  const auto load = [&] { load_speaker_encoder(dir.path()); };
  EXPECT_EQ(testing::error_code_of(load), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message(load).find("enc_res2net_scale"), std::string::npos) << testing::error_message(load);
}

}  // namespace
}  // namespace izwi
