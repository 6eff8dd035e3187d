// The izwi-speak command line contract: the released code's codes from --text-ids, whole and
// streamed, the WAV it writes, JSON output, errors.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"

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

TEST(CliSpeak, ErrorsGoToStderrWithANonZeroExit) {
  const std::string ids = ids_argument(testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids"));
  testing::expect_cli_errors(
      "izwi-speak", {
                        {ids, "--model is required"},
                        {kModel, "give --text or --text-ids"},
                        {kModel + ids + " --speaker carol", "speaker 'carol' is not supported (alice, bob)"},
                        {kModel + ids + " --language klingon", "language 'klingon' is not supported"},
                        {kModel + " --text hello", "text needs a tokenizer"},
                        {kModel + " --text-ids 1,x", "'x' is not a token id"},
                        {kModel + ids + " --max-frames 0", "max_frames = 0 must be >= 1"},
                        {kModel + ids + " --text-mode sideways", "--text-mode"},
                        {"--model " + testing::fixture_dir("llama-tiny") + ids, "not a speech synthesis model"},
                    });
}

}  // namespace
}  // namespace izwi
