// LFM2-Audio's audio input path against the released liquid-audio code (fixture lfm2-audio-tiny):
// NeMo log-mel, FastConformer encoder and adapter, stage by stage and chained, plus typed errors.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

#include "audio/nemo_log_mel.h"
#include "common/error_message.h"
#include "common/json_fields.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "izwi/audio.h"
#include "izwi/errors.h"
#include "models/lfm2_audio/audio_adapter.h"
#include "models/lfm2_audio/fast_conformer.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr double kTolerance = 1e-4;
const char* const kFixture = "lfm2-audio-tiny";

// Measured differences go into the test report (--gtest_output=xml).
void record_diff(const char* name, double diff) { ::testing::Test::RecordProperty(name, fmt::format("{:.3g}", diff)); }

// The checkpoint's tensors this test does not build: the LM, the audio-out side and buffers.
void skip_all_but_audio_in(WeightLoader& loader, int64_t layers) {
  for (const char* prefix : {"lfm.", "depthformer.", "depth_linear.", "depth_embeddings.", "audio_embedding.",
                             "codebook_offsets", "audio_loss_weights"}) {
    loader.skip_prefix(prefix);
  }
  // int64 counters of BatchNorm's training statistics: not used in eval mode.
  for (int64_t i = 0; i < layers; ++i) {
    loader.skip("conformer.layers." + std::to_string(i) + ".conv.batch_norm.num_batches_tracked");
  }
}

class Lfm2AudioEncoderParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ref_ = new testing::ReferenceTensors(kFixture);
    const HfConfig hf = HfConfig::load(testing::fixture_dir(kFixture));
    const JsonFields top = hf.fields();
    mel_config_ = NemoLogMelConfig::parse(*top.object("preprocessor"));
    encoder_config_ = FastConformerConfig::parse(*top.object("encoder"));
    lm_hidden_ = top.object("lfm")->get<int64_t>("hidden_size");
    WeightLoader loader(testing::fixture_dir(kFixture), at::kFloat, at::kFloat, testing::test_device());
    encoder_ = new FastConformerEncoder(loader, encoder_config_);
    adapter_ = new Lfm2AudioAdapter(loader, encoder_config_.d_model, lm_hidden_);
    skip_all_but_audio_in(loader, encoder_config_.n_layers);
    loader.finish();
  }
  static void TearDownTestSuite() {
    delete adapter_;
    delete encoder_;
    delete ref_;
  }

  static testing::ReferenceTensors* ref_;
  static NemoLogMelConfig mel_config_;
  static FastConformerConfig encoder_config_;
  static int64_t lm_hidden_;
  static FastConformerEncoder* encoder_;
  static Lfm2AudioAdapter* adapter_;
};

testing::ReferenceTensors* Lfm2AudioEncoderParity::ref_ = nullptr;
NemoLogMelConfig Lfm2AudioEncoderParity::mel_config_;
FastConformerConfig Lfm2AudioEncoderParity::encoder_config_;
int64_t Lfm2AudioEncoderParity::lm_hidden_ = 0;
FastConformerEncoder* Lfm2AudioEncoderParity::encoder_ = nullptr;
Lfm2AudioAdapter* Lfm2AudioEncoderParity::adapter_ = nullptr;

TEST_F(Lfm2AudioEncoderParity, ParsesTheConfig) {
  EXPECT_EQ(mel_config_.sample_rate, 16000);
  EXPECT_EQ(mel_config_.n_fft, 512);
  EXPECT_EQ(mel_config_.win_length, 400);
  EXPECT_EQ(mel_config_.hop, 160);
  EXPECT_EQ(mel_config_.n_mels, 128);
  EXPECT_EQ(mel_config_.pad_to, 0);
  EXPECT_DOUBLE_EQ(mel_config_.f_max, 8000.0);
  EXPECT_EQ(encoder_config_.d_model, 64);
  EXPECT_EQ(encoder_config_.n_heads, 4);
  EXPECT_EQ(encoder_config_.subsampling_conv_channels, 16);
  EXPECT_EQ(encoder_config_.subsampled_features(), 16);
  EXPECT_FALSE(encoder_config_.xscaling);
  // ceil(T / 8), liquid-audio's mel2emb_len.
  for (int64_t t : {1, 7, 8, 9, 137, 138, 1000}) EXPECT_EQ(encoder_->output_frames(t), (t + 7) / 8) << t;
}

TEST_F(Lfm2AudioEncoderParity, MelFromWaveformMatches) {
  const at::Tensor expected = ref_->get("mel");
  const at::Tensor mel = nemo_log_mel(ref_->get("waveform_16k"), mel_config_);
  ASSERT_EQ(mel.sizes(), expected.sizes());
  const double diff = max_abs_diff(mel, expected);
  record_diff("mel_max_abs_diff", diff);
  EXPECT_LT(diff, kTolerance);
  // The frame past the valid length is zero, as NeMo masks it.
  EXPECT_EQ(mel.select(1, mel.size(1) - 1).abs().max().item<float>(), 0.0f);
}

TEST_F(Lfm2AudioEncoderParity, MelFromWavFileMatches) {
  const AudioBuffer audio = read_audio(testing::fixture_dir(kFixture) + "/audio.wav");
  ASSERT_EQ(audio.sample_rate, 16000);
  std::vector<float> mono = to_mono(audio);
  const at::Tensor waveform = at::from_blob(mono.data(), {static_cast<int64_t>(mono.size())}, at::kFloat).clone();
  ASSERT_EQ(waveform.sizes(), ref_->get("waveform_16k").sizes());
  const double diff = max_abs_diff(nemo_log_mel(waveform, mel_config_), ref_->get("mel"));
  record_diff("mel_from_wav_max_abs_diff", diff);
  EXPECT_LT(diff, kTolerance);
}

TEST_F(Lfm2AudioEncoderParity, EncoderFromReferenceMelMatches) {
  const at::Tensor expected = ref_->get("encoder_out");
  const at::Tensor out = encoder_->encode(ref_->get("mel"));
  ASSERT_EQ(out.sizes(), expected.sizes());
  const double diff = max_abs_diff(out, expected);
  record_diff("encoder_out_max_abs_diff", diff);
  EXPECT_LT(diff, kTolerance);
}

TEST_F(Lfm2AudioEncoderParity, EncoderFromOwnMelMatches) {
  const at::Tensor out = encoder_->encode(nemo_log_mel(ref_->get("waveform_16k"), mel_config_));
  const double diff = max_abs_diff(out, ref_->get("encoder_out"));
  record_diff("encoder_out_from_own_mel_max_abs_diff", diff);
  EXPECT_LT(diff, kTolerance);
}

TEST_F(Lfm2AudioEncoderParity, AdapterMatches) {
  const at::Tensor expected = ref_->get("audio_in_embeds");
  const at::Tensor embeds = (*adapter_)(ref_->get("encoder_out"));
  ASSERT_EQ(embeds.sizes(), expected.sizes());
  const double diff = max_abs_diff(embeds, expected);
  record_diff("audio_in_embeds_max_abs_diff", diff);
  EXPECT_LT(diff, kTolerance);
  // The whole chain, waveform to embeddings.
  const at::Tensor chained = (*adapter_)(encoder_->encode(nemo_log_mel(ref_->get("waveform_16k"), mel_config_)));
  const double chained_diff = max_abs_diff(chained, expected);
  record_diff("audio_in_embeds_from_waveform_max_abs_diff", chained_diff);
  EXPECT_LT(chained_diff, kTolerance);
}

TEST_F(Lfm2AudioEncoderParity, BadInputGivesTypedErrors) {
  EXPECT_EQ(testing::error_code_of([&] { nemo_log_mel(at::zeros({0}), mel_config_); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { nemo_log_mel(at::zeros({100}), mel_config_); }),
            ErrorCode::InvalidArgument);  // under one hop
  EXPECT_EQ(testing::error_code_of([&] {
              nemo_log_mel(at::zeros({2, 1600}), mel_config_);
            }),
            ErrorCode::InvalidArgument);
  at::Tensor nan = at::zeros({1600});
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(testing::error_code_of([&] { nemo_log_mel(nan, mel_config_); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { encoder_->encode(at::zeros({80, 20})); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { encoder_->encode(at::zeros({128, 0})); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { (*adapter_)(at::zeros({3, 32})); }), ErrorCode::InvalidArgument);
}

TEST_F(Lfm2AudioEncoderParity, ConfigOutOfRangeNamesTheField) {
  const nlohmann::json config = read_json_file(testing::fixture_dir(kFixture) + "/config.json");
  nlohmann::json preprocessor = config["preprocessor"];
  preprocessor["features"] = 0;
  const JsonFields p(preprocessor, "config.json.preprocessor");
  EXPECT_EQ(testing::error_code_of([&] { NemoLogMelConfig::parse(p); }), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message([&] { NemoLogMelConfig::parse(p); }).find("'features'"), std::string::npos);

  nlohmann::json encoder = config["encoder"];
  encoder["n_heads"] = 100000;
  const JsonFields e(encoder, "config.json.encoder");
  EXPECT_EQ(testing::error_code_of([&] { FastConformerConfig::parse(e); }), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message([&] { FastConformerConfig::parse(e); }).find("'n_heads'"), std::string::npos);

  nlohmann::json causal = config["encoder"];
  causal["att_context_size"] = nlohmann::json::array({nlohmann::json::array({70, 0})});
  const JsonFields limited(causal, "config.json.encoder");
  EXPECT_EQ(testing::error_code_of([&] { FastConformerConfig::parse(limited); }), ErrorCode::Unsupported);
}

TEST_F(Lfm2AudioEncoderParity, WrongTensorShapeNamesTheTensor) {
  WeightLoader loader(testing::fixture_dir(kFixture), at::kFloat, at::kFloat, testing::test_device());
  FastConformerConfig wrong = encoder_config_;
  wrong.ff_expansion_factor = 3;  // the checkpoint's feed-forward is 2 x d_model wide
  const std::string message = testing::error_message([&] { FastConformerEncoder(loader, wrong); });
  EXPECT_NE(message.find("conformer.layers.0.feed_forward1.linear1.weight"), std::string::npos) << message;
  EXPECT_EQ(testing::error_code_of([&] { FastConformerEncoder(loader, wrong); }), ErrorCode::InvalidFormat);

  WeightLoader adapter_loader(testing::fixture_dir(kFixture), at::kFloat, at::kFloat, testing::test_device());
  const std::string adapter_message =
      testing::error_message([&] { Lfm2AudioAdapter(adapter_loader, encoder_config_.d_model, lm_hidden_ * 2); });
  EXPECT_NE(adapter_message.find("audio_adapter.model.1.weight"), std::string::npos) << adapter_message;
}

}  // namespace
}  // namespace izwi
