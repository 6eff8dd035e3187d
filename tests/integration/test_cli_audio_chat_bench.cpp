// The izwi-audio-chat-bench command line contract: on a random tiny LFM2-Audio checkpoint from
// izwi-make-checkpoint (with a random moshi Mimi beside it), the JSON report holds the ASR
// real-time factor and, per concurrency level, frames/s, RTF and TTFA; bad arguments exit 1.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "common/cli_run.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

TEST(CliAudioChatBench, MakeCheckpointThenBenchReportsEveryContractKey) {
  testing::TempDir dir;
  const std::string model = dir.path() + "/lfm2-audio-tiny-random";
  const testing::CliRun made = testing::run_built(
      "benchmarks/izwi-make-checkpoint", "--arch lfm2_audio --preset tiny --dtype bf16 --seed 3 --out " + model);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::filesystem::exists(model + "/tokenizer-random.safetensors"));
  const testing::CliRun run =
      testing::run_built("benchmarks/izwi-audio-chat-bench",
                         "--model " + model + " --concurrency 1,2 --items 20 --audio-seconds 1 --json" +
                             // The counts below are float32's greedy path: bf16 weights (the
                             // checkpoint's, kept by "auto") round the activations on avx512_bf16
                             // and this random model's greedy answer then holds 9 frames.
                             " --weight-dtype float32");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::last_line(run.out));
  EXPECT_GT(report.at("asr_rtf").get<double>(), 0.0);
  EXPECT_TRUE(report.at("codec").get<bool>());
  EXPECT_GT(report.at("resident_weight_bytes").get<int64_t>(), 0);
  ASSERT_EQ(report.at("chat").size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& level = report["chat"][i];
    EXPECT_EQ(level.at("concurrency").get<int>(), static_cast<int>(i + 1));
    // 20 interleaved items: 6 text tokens, 12 frames, 2 text tokens per stream (greedy, no end).
    EXPECT_EQ(level.at("frames").get<int>(), 12 * static_cast<int>(i + 1));
    EXPECT_GT(level.at("frames_per_s").get<double>(), 0.0);
    EXPECT_GT(level.at("rtf_p50").get<double>(), 0.0);
    EXPECT_GE(level.at("rtf_max").get<double>(), level.at("rtf_p50").get<double>());
    EXPECT_GT(level.at("ttfa_p50_ms").get<double>(), 0.0);
  }
}

TEST(CliAudioChatBench, BadArgumentsAreNamed) {
  testing::TempDir dir;
  const testing::CliRun missing =
      testing::run_built("benchmarks/izwi-audio-chat-bench", "--model " + dir.path() + "/none");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none"), std::string::npos) << missing.err;
  const testing::CliRun items =
      testing::run_built("benchmarks/izwi-audio-chat-bench", "--model " + dir.path() + " --items 1");
  EXPECT_EQ(items.exit_code, 1);
  EXPECT_NE(items.err.find("--items"), std::string::npos) << items.err;
}

}  // namespace
}  // namespace izwi
