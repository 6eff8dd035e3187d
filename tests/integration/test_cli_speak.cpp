// The izwi-speak command line contract: the released code's codes from --text-ids, whole and
// streamed, the WAV it writes, JSON output, cloned voices and voice files, errors.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "izwi/voice.h"

namespace izwi {
namespace {

const std::string kModel = "--model " + testing::fixture_dir("qwen3-tts-tiny");

std::string ids_argument(const std::vector<int32_t>& ids) {
  std::string list;
  for (int32_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  return " --text-ids " + list;
}

TEST(CliSpeak, JsonCodesMatchTheReferenceWholeAndStreamedAndTheWavHoldsTheAudio) {
  const testing::ReferenceTensors ref("qwen3-tts-tiny");
  const at::Tensor codes = ref.get("case2.codes");
  nlohmann::json expected = nlohmann::json::array();
  for (int64_t f = 0; f < codes.size(0); ++f) {
    nlohmann::json frame = nlohmann::json::array();
    for (int64_t k = 0; k < codes.size(1); ++k) frame.push_back(codes[f][k].item<int64_t>());
    expected.push_back(frame);
  }
  testing::TempDir dir;
  for (const char* mode : {"", " --stream"}) {
    const std::string wav = dir.file(std::string("out") + (mode[0] ? "_stream" : "") + ".wav");
    const testing::CliRun run =
        testing::run_example("izwi-speak", kModel + ids_argument(ref.ids("case2.input_ids")) +
                                               " --speaker alice --language chinese --text-mode full --temperature 0"
                                               " --max-frames 19 --json --out " +
                                               wav + mode);
    ASSERT_EQ(run.exit_code, 0) << mode << ": " << run.err;
    const nlohmann::json line = nlohmann::json::parse(run.out);
    EXPECT_EQ(line.at("codes"), expected) << mode;
    EXPECT_EQ(line.at("frames"), 19);
    EXPECT_EQ(line.at("sample_rate"), 24000);
    EXPECT_NEAR(line.at("audio_seconds").get<double>(), 19 * 0.08, 1e-9);
    EXPECT_GT(line.at("rtf").get<double>(), 0.0);
    EXPECT_GT(line.at("first_audio_ms").get<double>(), 0.0);
    const AudioBuffer audio = read_audio(wav);
    EXPECT_EQ(audio.sample_rate, 24000);
    EXPECT_EQ(audio.frames(), 19u * 1920u) << mode;
  }
}

TEST(CliSpeak, ClonesAVoiceSavesItAndSpeaksTheSameFromTheVoiceFile) {
  testing::TempDir dir, model;
  const std::string base = "--model " + testing::make_qwen3_tts_base_model(model);
  const at::Tensor reference = testing::ReferenceTensors("qwen3-tts-speaker-encoder-tiny").get("case0.waveform_24k");
  const at::Tensor samples = reference.to(at::kFloat).contiguous();
  write_wav(dir.file("ref.wav"), {samples.data_ptr<float>(), samples.data_ptr<float>() + samples.numel()}, 24000);
  const std::string args = base + ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids")) +
                           " --language english --temperature 0 --max-frames 6 --json";
  const testing::CliRun cloned = testing::run_example(
      "izwi-speak", args + " --voice-audio " + dir.file("ref.wav") + " --save-voice " + dir.file("voice.json"));
  ASSERT_EQ(cloned.exit_code, 0) << cloned.err;
  EXPECT_EQ(load_voice(dir.file("voice.json")).xvector.size(), 64u);
  const testing::CliRun reused = testing::run_example("izwi-speak", args + " --voice-file " + dir.file("voice.json"));
  ASSERT_EQ(reused.exit_code, 0) << reused.err;
  const nlohmann::json codes = nlohmann::json::parse(cloned.out).at("codes");
  EXPECT_EQ(codes.size(), 6u);
  EXPECT_EQ(nlohmann::json::parse(reused.out).at("codes"), codes);

  const std::string ids = ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids"));
  testing::expect_cli_errors(
      "izwi-speak", {
                        {kModel + ids + " --voice-audio " + dir.file("ref.wav"), "needs a Qwen3-TTS Base model"},
                        {base + ids + " --save-voice " + dir.file("v.json"), "--save-voice needs --voice-audio"},
                        {base + ids + " --voice-file " + dir.file("missing.json"), "missing.json"},
                        {base + ids + " --voice-audio " + dir.file("none.wav"), "none.wav"},
                        {kModel + ids + " --speaker alice --voice-file " + dir.file("voice.json"), "excludes"},
                    });
}

TEST(CliSpeak, ClonesAVoiceInContextFromAudioAndItsTranscript) {
  testing::TempDir dir, model;
  const std::string base = "--model " + testing::make_qwen3_tts_base_model(model, true);
  const at::Tensor samples =
      testing::ReferenceTensors("qwen3-tts-speaker-encoder-tiny").get("case0.waveform_24k").to(at::kFloat).contiguous();
  write_wav(dir.file("ref.wav"), {samples.data_ptr<float>(), samples.data_ptr<float>() + samples.numel()}, 24000);
  const std::vector<int32_t> case1 = testing::ReferenceTensors("qwen3-tts-tiny").ids("case1.input_ids");
  const std::vector<int32_t> transcript(case1.begin(), case1.end() - 3);  // ... <|im_end|>\n
  const std::string args = base + ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids")) +
                           " --temperature 0 --max-frames 4 --json --voice-audio " + dir.file("ref.wav");
  std::string transcript_ids;
  for (const int32_t id : transcript) transcript_ids += (transcript_ids.empty() ? "" : ",") + std::to_string(id);
  const testing::CliRun cloned = testing::run_example(
      "izwi-speak", args + " --voice-text-ids " + transcript_ids + " --save-voice " + dir.file("voice.json"));
  ASSERT_EQ(cloned.exit_code, 0) << cloned.err;
  const Voice voice = load_voice(dir.file("voice.json"));
  EXPECT_EQ(voice.reference_text_ids, transcript);
  EXPECT_EQ(voice.reference_codes.size(), (static_cast<size_t>(samples.numel()) + 1919) / 1920);
  const testing::CliRun reused = testing::run_example(
      "izwi-speak", base + ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids")) +
                        " --temperature 0 --max-frames 4 --json --voice-file " + dir.file("voice.json"));
  ASSERT_EQ(reused.exit_code, 0) << reused.err;
  EXPECT_EQ(nlohmann::json::parse(reused.out).at("codes"), nlohmann::json::parse(cloned.out).at("codes"));
  testing::expect_cli_errors("izwi-speak", {
                                               // The library's transcript / transcript_ids, in the flags' terms.
                                               {args + " --voice-text hello", "pass --voice-text-ids"},
                                               {args + " --voice-text hello", "--voice-text needs a tokenizer"},
                                               {args + " --voice-text hi --voice-text-ids 1,2", "excludes"},
                                               {base + " --text-ids 1,2 --voice-text hi", "requires --voice-audio"},
                                           });
}

TEST(CliSpeak, ErrorsGoToStderrWithANonZeroExit) {
  const std::string ids = ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids"));
  testing::expect_cli_errors(
      "izwi-speak",
      {
          {ids, "--model is required"},
          {kModel, "give --text or --text-ids"},
          {kModel + ids + " --speaker carol", "speaker 'carol' is not supported (alice, bob)"},
          {kModel + ids + " --language klingon", "language 'klingon' is not supported"},
          {kModel + " --text hello", "text needs a tokenizer"},
          {kModel + " --text-ids 1,x", "'x' is not a token id"},
          {kModel + ids + " --max-frames 0", "--max-tokens = 0 must be >= 1"},  // params.max_frames
          {kModel + ids + " --text-mode sideways", "--text-mode"},
          {"--model " + testing::fixture_dir("llama-tiny") + ids, "'llama-tiny' is a text model: use izwi-generate"},
      });
}

}  // namespace
}  // namespace izwi
