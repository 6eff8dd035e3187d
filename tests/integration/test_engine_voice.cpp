// Voice cloning through the engine, on a Qwen3-TTS Base model assembled from the qwen3-tts-tiny
// talker and the qwen3-tts-speaker-encoder-tiny encoder (common/qwen3_tts_base_model.h): voices
// from reference audio equal the released x-vectors, an x-vector in the speaker slot speaks as the
// released code does, requests in one voice share its prompt through the prefix cache, voice files
// round-trip exactly, and bad voices are named.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "codec/codec_encoder.h"
#include "common/codec_frames.h"
#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

using testing::fixture_dir;
using testing::ReferenceTensors;

constexpr int kAlice = 3000;  // alice's codec id in qwen3-tts-tiny

std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kFloat).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

std::vector<std::vector<int32_t>> frames_of(const at::Tensor& codes) {
  std::vector<std::vector<int32_t>> frames;
  for (int64_t f = 0; f < codes.size(0); ++f) {
    std::vector<int32_t> frame;
    for (int64_t k = 0; k < codes.size(1); ++k) frame.push_back(static_cast<int32_t>(codes[f][k].item<int64_t>()));
    frames.push_back(frame);
  }
  return frames;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float diff = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  return diff;
}

class EngineVoice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    model_ = testing::make_qwen3_tts_base_model(*dir_);
    engine_ = new Engine(model_, testing::test_engine_config());
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }

  /// A greedy request for case `c` of qwen3-tts-tiny in `voice`.
  static SpeechRequest greedy(int c, const Voice& voice) {
    static const std::string languages[] = {"english", "auto", "chinese"};
    const ReferenceTensors ref("qwen3-tts-tiny");
    SpeechRequest r;
    r.text_ids = ref.ids("case" + std::to_string(c) + ".input_ids");
    r.voice = voice;
    r.language = languages[c];
    r.text_mode = c == 2 ? SpeechTextMode::Full : SpeechTextMode::Streaming;
    r.params.sampling.temperature = 0.0f;
    r.params.codebook_sampling.temperature = 0.0f;
    r.params.max_frames = 19;
    return r;
  }

  static Voice voice_of_case(int c) {
    const ReferenceTensors ref("qwen3-tts-speaker-encoder-tiny");
    return engine_->create_voice(to_vector(ref.get("case" + std::to_string(c) + ".waveform_24k")), 24000);
  }

  static testing::TempDir* dir_;
  static std::string model_;
  static Engine* engine_;
};

testing::TempDir* EngineVoice::dir_ = nullptr;
std::string EngineVoice::model_;
Engine* EngineVoice::engine_ = nullptr;

TEST_F(EngineVoice, ModelInfoSaysTheModelClonesVoices) {
  EXPECT_TRUE(engine_->model_info().clones_voices);
  EXPECT_TRUE(engine_->model_info().speakers.empty());
  EXPECT_FALSE(Engine(fixture_dir("qwen3-tts-tiny"), testing::test_engine_config()).model_info().clones_voices);
}

TEST_F(EngineVoice, VoicesOfReferenceAudioAreTheReleasedXvectors) {
  const ReferenceTensors ref("qwen3-tts-speaker-encoder-tiny");
  for (int c = 0; c < 3; ++c) {
    const std::string k = "case" + std::to_string(c);
    const Voice voice = voice_of_case(c);
    EXPECT_EQ(voice.model_type, "qwen3_tts");
    EXPECT_LT(max_abs_diff(voice.xvector, to_vector(ref.get(k + ".xvector"))), 2e-4) << k;
  }
  // At another rate the audio is resampled first (bound as for izwi-speaker-embed's 48 kHz test).
  const std::vector<float> at_48k = resample(to_vector(ref.get("case0.waveform_24k")), 24000, 48000);
  const Voice resampled = engine_->create_voice(at_48k, 48000);
  EXPECT_LT(max_abs_diff(resampled.xvector, to_vector(ref.get("case0.xvector"))), 3e-2);
}

TEST_F(EngineVoice, AnXvectorInTheSpeakerSlotSpeaksAsTheNamedSpeakerItEquals) {
  // alice's codec embedding row as the x-vector: the Base prompt is then the CustomVoice prompt of
  // alice, so the released code's codes for alice (cases 0 and 2) come out.
  const Voice alice{"qwen3_tts", testing::qwen3_tts_tiny_codec_embedding(kAlice)};
  const ReferenceTensors ref("qwen3-tts-tiny");
  for (int c : {0, 2}) {
    const Output out = engine_->synthesize(greedy(c, alice));
    EXPECT_EQ(out.audio_codes, frames_of(ref.get("case" + std::to_string(c) + ".codes"))) << "case " << c;
  }
}

TEST_F(EngineVoice, RequestsInOneVoiceShareItsPromptThroughThePrefixCache) {
  EngineConfig config = testing::test_engine_config();
  config.block_size = 4;  // role (3) + think, think_bos, language, think_eos (4) + voice (1) = 2 blocks
  Engine engine(model_, config);
  const Voice voice = voice_of_case(0), other = voice_of_case(1);
  const Output cold = engine.synthesize(greedy(0, voice));
  EXPECT_EQ(cold.prefix_cache_hit_tokens, 0);
  // Another sentence in the same voice reuses everything up to and including the voice slot.
  SpeechRequest next = greedy(0, voice);
  next.text_ids = greedy(1, voice).text_ids;
  EXPECT_EQ(engine.synthesize(next).prefix_cache_hit_tokens, 8);
  // The same request again: the same codes from cached state as from a cold engine.
  const Output warm = engine.synthesize(greedy(0, voice));
  EXPECT_GE(warm.prefix_cache_hit_tokens, 8);
  EXPECT_EQ(warm.audio_codes, cold.audio_codes);
  // Another voice shares only the block before the voice slot.
  EXPECT_EQ(engine.synthesize(greedy(0, other)).prefix_cache_hit_tokens, 4);
  // A voice equal to the first (a copy, as a voice file gives back) is the same voice.
  const Voice copy{voice.model_type, voice.xvector};
  EXPECT_GE(engine.synthesize(greedy(0, copy)).prefix_cache_hit_tokens, 8);
  EXPECT_EQ(testing::check_idle(engine), "");
}

/// An in-context voice: the x-vector of speaker-encoder case `c`, and as its reference the
/// transcript and released codes of qwen3-tts-tiny case 1 (19 frames).
Voice in_context_voice(const Voice& base) {
  const ReferenceTensors ref("qwen3-tts-tiny");
  Voice voice = base;
  const std::vector<int32_t> ids = ref.ids("case1.input_ids");  // ... <|im_end|>\n<|im_start|>assistant\n
  voice.reference_text_ids.assign(ids.begin(), ids.end() - 3);  // ... <|im_end|>\n
  voice.reference_codes = frames_of(ref.get("case1.codes"));
  return voice;
}

TEST_F(EngineVoice, InContextVoicesContinueTheReferenceAndItsAudioIsNotInTheOutput) {
  const Voice voice = in_context_voice(voice_of_case(0));
  for (SpeechTextMode mode : {SpeechTextMode::Streaming, SpeechTextMode::Full}) {
    SpeechRequest r = greedy(0, voice);
    r.text_mode = mode;
    r.params.max_frames = 6;
    const Output out = engine_->synthesize(r);
    ASSERT_FALSE(out.audio_codes.empty());
    ASSERT_EQ(out.audio.size(), out.audio_codes.size() * 1920);
    // The audio is the decode of reference + generated codes with the reference's samples cut.
    std::vector<std::vector<int32_t>> all = voice.reference_codes;
    all.insert(all.end(), out.audio_codes.begin(), out.audio_codes.end());
    const at::Tensor whole = testing::decode_frames(dir_->path() + "/speech_tokenizer", all);
    const at::Tensor generated = whole.slice(0, static_cast<int64_t>(voice.reference_codes.size()) * 1920);
    EXPECT_LT(testing::max_abs_diff(at::tensor(out.audio), generated), 1e-4);
    // Streamed in chunks of 2 frames: the same audio.
    r.chunk_frames = 2;
    StreamHandle stream = engine_->synthesize_streaming(r);
    std::vector<float> streamed;
    while (std::optional<StreamChunk> chunk = stream.next()) {
      streamed.insert(streamed.end(), chunk->audio.begin(), chunk->audio.end());
    }
    EXPECT_LT(max_abs_diff(streamed, out.audio), 1e-4);
  }
}

TEST_F(EngineVoice, InContextVoicesShareTheirReferencePromptThroughThePrefixCache) {
  EngineConfig config = testing::test_engine_config();
  config.block_size = 4;
  Engine engine(model_, config);
  const Voice voice = in_context_voice(voice_of_case(0));
  SpeechRequest r = greedy(0, voice);
  r.text_mode = SpeechTextMode::Default;  // streaming, as released for Base models
  r.params.max_frames = 4;
  const Output cold = engine.synthesize(r);
  // 9 head positions + codec_bos + 19 frames under the transcript and text: 29 positions.
  const Output warm = engine.synthesize(r);
  EXPECT_EQ(warm.prefix_cache_hit_tokens, 28);
  EXPECT_EQ(warm.audio_codes, cold.audio_codes);
  // Another reference recording in the same x-vector shares only what precedes the reference.
  Voice other = voice;
  other.reference_codes[0][3] = (other.reference_codes[0][3] + 1) % 2048;
  SpeechRequest o = r;
  o.voice = other;
  EXPECT_EQ(engine.synthesize(o).prefix_cache_hit_tokens, 8);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST_F(EngineVoice, VoiceFilesRoundTripExactly) {
  testing::TempDir dir;
  const Voice voice = voice_of_case(1);
  save_voice(voice, dir.file("v.json"));
  const Voice loaded = load_voice(dir.file("v.json"));
  EXPECT_EQ(loaded.model_type, voice.model_type);
  EXPECT_EQ(loaded.xvector, voice.xvector);  // bit for bit
  EXPECT_EQ(engine_->synthesize(greedy(1, loaded)).audio_codes, engine_->synthesize(greedy(1, voice)).audio_codes);
  const Voice in_context = in_context_voice(voice);
  save_voice(in_context, dir.file("icl.json"));
  const Voice icl = load_voice(dir.file("icl.json"));
  EXPECT_EQ(icl.xvector, in_context.xvector);
  EXPECT_EQ(icl.reference_text_ids, in_context.reference_text_ids);
  EXPECT_EQ(icl.reference_codes, in_context.reference_codes);
}

TEST_F(EngineVoice, BadReferenceAudioIsNamed) {
  const auto error_of = [](const std::vector<float>& samples, int32_t rate) {
    return testing::error_message([&] { engine_->create_voice(samples, rate); });
  };
  std::vector<float> tone(24000);
  for (size_t i = 0; i < tone.size(); ++i) tone[i] = 0.3f * std::sin(0.05f * static_cast<float>(i));
  EXPECT_NE(error_of({tone.begin(), tone.begin() + 7200}, 24000).find("at least 0.5 s"), std::string::npos);
  EXPECT_NE(error_of(std::vector<float>(24000, 0.0f), 24000).find("silent"), std::string::npos);
  EXPECT_NE(error_of({}, 24000).find("empty"), std::string::npos);
  std::vector<float> nan = tone;
  nan[100] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(error_of(nan, 24000).find("not finite"), std::string::npos);
  EXPECT_NE(error_of(tone, 0).find("sample_rate"), std::string::npos);
  // Models that do not clone voices.
  Engine custom(fixture_dir("qwen3-tts-tiny"), testing::test_engine_config());
  EXPECT_NE(testing::error_message([&] { custom.create_voice(tone, 24000); }).find("needs a Qwen3-TTS Base model"),
            std::string::npos);
  Engine text(fixture_dir("qwen3-tiny"), testing::test_engine_config());
  EXPECT_NE(testing::error_message([&] { text.create_voice(tone, 24000); }).find("does not clone voices"),
            std::string::npos);
}

TEST_F(EngineVoice, VoicesThatDoNotFitTheRequestOrTheModelAreNamed) {
  const Voice voice = voice_of_case(0);
  const auto error_of = [](Engine& engine, const SpeechRequest& r) {
    return testing::error_message([&] { engine.synthesize(r); });
  };
  Voice narrow{"qwen3_tts", std::vector<float>(63, 0.1f)};
  EXPECT_NE(error_of(*engine_, greedy(0, narrow)).find("voice was made by another model (qwen3_tts with a 63-wide"),
            std::string::npos);
  Voice foreign{"lfm2_audio", voice.xvector};
  EXPECT_NE(error_of(*engine_, greedy(0, foreign)).find("another model (lfm2_audio"), std::string::npos);
  Voice infinite = voice;
  infinite.xvector[5] = std::numeric_limits<float>::infinity();
  EXPECT_NE(error_of(*engine_, greedy(0, infinite)).find("xvector[5] = inf is not finite"), std::string::npos);
  SpeechRequest both = greedy(0, voice);
  both.speaker = "alice";
  EXPECT_NE(error_of(*engine_, both).find("give a speaker or a voice, not both"), std::string::npos);
  Engine custom(fixture_dir("qwen3-tts-tiny"), testing::test_engine_config());
  EXPECT_NE(error_of(custom, greedy(0, voice)).find("voices are for Qwen3-TTS Base models"), std::string::npos);
  Voice short_frames = in_context_voice(voice);
  short_frames.reference_codes[2].pop_back();
  EXPECT_NE(error_of(*engine_, greedy(0, short_frames)).find("reference_codes[2] has 15 codes"), std::string::npos);
  EXPECT_EQ(testing::check_idle(*engine_), "");
}

TEST_F(EngineVoice, CorruptVoiceFilesAreNamed) {
  testing::TempDir dir;
  const auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    const std::string message = testing::error_message([&] { load_voice(path); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    return message;
  };
  EXPECT_NE(testing::error_message([&] { load_voice(dir.file("missing.json")); }).find("missing.json"),
            std::string::npos);
  EXPECT_NE(error_of("text.json", "not json").find("text.json"), std::string::npos);
  EXPECT_NE(error_of("array.json", "[1, 2]").find("not a voice file"), std::string::npos);
  EXPECT_NE(error_of("other.json", R"({"format": "other", "version": 1})").find("not a voice file"), std::string::npos);
  const std::string head = R"({"format": "izwi-voice", "model_type": "qwen3_tts", )";
  EXPECT_NE(error_of("v2.json", head + R"("version": 2, "xvector": [1]})").find("version 2 is not supported"),
            std::string::npos);
  EXPECT_NE(error_of("none.json", head + R"("version": 1})").find("'xvector' must be an array"), std::string::npos);
  EXPECT_NE(error_of("str.json", head + R"("version": 1, "xvector": [1, "a"]})").find("xvector[1] = \"a\""),
            std::string::npos);
  EXPECT_NE(error_of("big.json", head + R"("version": 1, "xvector": [1e300]})").find("not a finite float"),
            std::string::npos);
  EXPECT_NE(error_of("deep.json", std::string(100000, '[')).find("deep.json"), std::string::npos);
  std::filesystem::create_directory(dir.file("folder.json"));
  EXPECT_NE(testing::error_message([&] { load_voice(dir.file("folder.json")); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(testing::error_message([&] { save_voice(Voice{}, dir.file("empty.json")); }).find("empty voice"),
            std::string::npos);
  const std::string voice = head + R"("version": 1, "xvector": [1], )";
  EXPECT_NE(error_of("half.json", voice + R"("reference_codes": [[1, 2]]})").find("needs both"), std::string::npos);
  EXPECT_NE(error_of("ragged.json", voice + R"("reference_text_ids": [1], "reference_codes": [[1, 2], [3]]})")
                .find("reference_codes[1] has 1 codes"),
            std::string::npos);
  EXPECT_NE(error_of("neg.json", voice + R"("reference_text_ids": [1], "reference_codes": [[1, -2]]})")
                .find("reference_codes[0][1] = -2 is not an integer"),
            std::string::npos);
}

TEST(EngineVoiceFromAudio, ATranscriptMakesAnInContextVoiceFromTheSpeechTokenizersEncoder) {
  testing::TempDir dir;
  const std::string model = testing::make_qwen3_tts_base_model(dir, true);
  Engine engine(model, testing::test_engine_config());
  const ReferenceTensors speaker("qwen3-tts-speaker-encoder-tiny");
  const std::vector<float> samples = to_vector(speaker.get("case0.waveform_24k"));
  const std::vector<int32_t> transcript = in_context_voice(Voice{}).reference_text_ids;

  const Voice plain = engine.create_voice(samples, 24000);
  const Voice voice = engine.create_voice(samples, 24000, VoiceTranscript{"", transcript});
  EXPECT_EQ(voice.xvector, plain.xvector);
  EXPECT_EQ(voice.reference_text_ids, transcript);
  // The reference codes are the speech tokenizer's encoding of the recording, frame by frame.
  const auto encoder = load_codec_encoder(model, Backend::host());
  const at::Tensor codes = encoder->encode(at::tensor(samples));
  ASSERT_EQ(codes.size(0), 16);
  ASSERT_EQ(static_cast<int64_t>(voice.reference_codes.size()), codes.size(1));
  EXPECT_EQ(codes.size(1), (static_cast<int64_t>(samples.size()) + 1919) / 1920);
  for (int64_t f = 0; f < codes.size(1); ++f) {
    for (int64_t k = 0; k < 16; ++k) ASSERT_EQ(voice.reference_codes[f][k], codes[k][f].item<int64_t>()) << f << k;
  }
  // At another rate the recording is resampled to the codec's first.
  const std::vector<float> at_16k = resample(samples, 24000, 16000);
  const Voice resampled = engine.create_voice(at_16k, 16000, VoiceTranscript{"", transcript});
  const at::Tensor codes_16k = encoder->encode(at::tensor(resample(at_16k, 16000, 24000)));
  ASSERT_EQ(static_cast<int64_t>(resampled.reference_codes.size()), codes_16k.size(1));
  EXPECT_EQ(resampled.reference_codes[1][3], codes_16k[3][1].item<int64_t>());

  // The voice speaks, continuing its reference: the audio is the decode of reference + generated
  // codes with the reference's samples cut.
  SpeechRequest r;
  r.text_ids = ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids");
  r.voice = voice;
  r.params.sampling.temperature = 0.0f;
  r.params.codebook_sampling.temperature = 0.0f;
  r.params.max_frames = 4;
  const Output out = engine.synthesize(r);
  ASSERT_FALSE(out.audio_codes.empty());
  std::vector<std::vector<int32_t>> all = voice.reference_codes;
  all.insert(all.end(), out.audio_codes.begin(), out.audio_codes.end());
  const at::Tensor whole = testing::decode_frames(model + "/speech_tokenizer", all);
  EXPECT_LT(testing::max_abs_diff(at::tensor(out.audio),
                                  whole.slice(0, static_cast<int64_t>(voice.reference_codes.size()) * 1920)),
            1e-4);
}

TEST(EngineVoiceFromAudio, TranscriptsThatCannotBeUsedAreNamed) {
  const ReferenceTensors speaker("qwen3-tts-speaker-encoder-tiny");
  const std::vector<float> samples = to_vector(speaker.get("case0.waveform_24k"));
  testing::TempDir with_encoder;
  Engine engine(testing::make_qwen3_tts_base_model(with_encoder, true), testing::test_engine_config());
  // The tiny model folder has no tokenizer, so text cannot be tokenized; ids can.
  const std::string no_tokenizer = testing::error_message([&] {
    engine.create_voice(samples, 24000, VoiceTranscript{"Hello.", {}});
  });
  EXPECT_NE(no_tokenizer.find("transcript needs a tokenizer"), std::string::npos) << no_tokenizer;
  EXPECT_EQ(testing::error_code_of([&] {
              engine.create_voice(samples, 24000, VoiceTranscript{"Hello.", {1, 2}});
            }),
            ErrorCode::InvalidArgument);
  // A voice whose transcript ids fall outside the vocabulary is refused when it is used.
  Voice bad = engine.create_voice(samples, 24000, VoiceTranscript{"", {1, 2, 3, 999999, 4, 5}});
  SpeechRequest r;
  r.text_ids = ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids");
  r.voice = bad;
  EXPECT_NE(testing::error_message([&] { engine.synthesize(r); }).find("voice reference_text_ids[3] = 999999"),
            std::string::npos);
  // A speech tokenizer without an encoder cannot make reference codes.
  testing::TempDir decoder_only;
  Engine plain(testing::make_qwen3_tts_base_model(decoder_only), testing::test_engine_config());
  EXPECT_EQ(testing::error_code_of([&] {
              plain.create_voice(samples, 24000, VoiceTranscript{"", {1, 2, 3, 4, 5, 6}});
            }),
            ErrorCode::Unsupported);
  EXPECT_NE(testing::error_message([&] {
              plain.create_voice(samples, 24000, VoiceTranscript{"", {1, 2, 3, 4, 5, 6}});
            }).find("speech tokenizer's encoder"),
            std::string::npos);
}

TEST(EngineVoiceConfig, AnXvectorWidthThatIsNotTheTalkersIsNamed) {
  testing::TempDir dir;
  testing::make_qwen3_tts_base_model(dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir.file("config.json")));
  config["speaker_encoder_config"]["enc_dim"] = 32;
  dir.write("config.json", config.dump());
  const std::string message = testing::error_message([&] { Engine engine(dir.path()); });
  EXPECT_NE(message.find("speaker_encoder_config.enc_dim = 32 must equal the talker's hidden_size 64"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace izwi
