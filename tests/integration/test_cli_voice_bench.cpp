// The izwi-voice-bench command line contract: on a random tiny Qwen3-TTS Base checkpoint from
// izwi-make-checkpoint (preset tiny-base: speaker encoder and the speech tokenizer's Mimi
// encoder), both kinds of voice are measured, warm in-context requests find the voice's prompt in
// the prefix cache, and bad arguments exit 1.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

TEST(CliVoiceBench, ReportsColdAndWarmRequestsOfBothKindsOfVoice) {
  testing::TempDir dir;
  const std::string model = dir.path() + "/qwen3-tts-tiny-base";
  const testing::CliRun made = testing::run_built(
      "benchmarks/izwi-make-checkpoint", "--arch qwen3_tts --preset tiny-base --dtype f32 --seed 3 --out " + model);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const testing::CliRun run = testing::run_built(
      "benchmarks/izwi-voice-bench", "--model " + model + " --requests 3 --frames 3 --reference-seconds 3 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::last_line(run.out));
  ASSERT_EQ(report.at("voices").size(), 2u);
  EXPECT_GT(report.at("resident_weight_bytes").get<int64_t>(), 0);
  const nlohmann::json& xvector = report["voices"][0];
  const nlohmann::json& in_context = report["voices"][1];
  EXPECT_EQ(xvector.at("voice"), "x-vector");
  EXPECT_EQ(xvector.at("reference_frames"), 0);
  EXPECT_EQ(in_context.at("voice"), "in-context");
  EXPECT_EQ(in_context.at("reference_frames"), 38);  // 3 s at 12.5 frames/s, rounded up
  for (const nlohmann::json* voice : {&xvector, &in_context}) {
    EXPECT_GT(voice->at("create_voice_ms").get<double>(), 0.0);
    EXPECT_GT(voice->at("cold_ttfa_ms").get<double>(), 0.0);
    EXPECT_EQ(voice->at("warm_ttfa_ms").size(), 2u);
    EXPECT_GT(voice->at("warm_over_cold").get<double>(), 0.0);
    EXPECT_EQ(voice->at("cached_positions").size(), 3u);
    EXPECT_EQ(voice->at("cached_positions")[0], 0);  // the cold request
  }
  // The in-context voice's transcript positions (16 + framing) fill one 16-position block.
  EXPECT_EQ(in_context.at("cached_positions")[1], 16);
  EXPECT_EQ(in_context.at("cached_positions")[2], 16);
}

TEST(CliVoiceBench, BadArgumentsAreNamed) {
  testing::TempDir dir;
  const testing::CliRun missing = testing::run_built("benchmarks/izwi-voice-bench", "--model " + dir.path() + "/none");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none"), std::string::npos) << missing.err;
  const testing::CliRun one =
      testing::run_built("benchmarks/izwi-voice-bench", "--model " + dir.path() + " --requests 1");
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.err.find("--requests"), std::string::npos) << one.err;
  // A CustomVoice model does not clone voices.
  const std::string custom = dir.path() + "/custom";
  ASSERT_EQ(testing::run_built("benchmarks/izwi-make-checkpoint",
                               "--arch qwen3_tts --preset tiny --dtype f32 --out " + custom)
                .exit_code,
            0);
  const testing::CliRun not_base = testing::run_built("benchmarks/izwi-voice-bench", "--model " + custom);
  EXPECT_EQ(not_base.exit_code, 1);
  EXPECT_NE(not_base.err.find("does not clone voices"), std::string::npos) << not_base.err;
}

}  // namespace
}  // namespace izwi
