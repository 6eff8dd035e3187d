// The izwi-tts-bench command line contract: on a random tiny Qwen3-TTS checkpoint from
// izwi-make-checkpoint, the JSON report holds every key outside checks read; bad arguments exit 1.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "common/cli_run.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

TEST(CliTtsBench, MakeCheckpointThenBenchReportsEveryContractKey) {
  testing::TempDir dir;
  const std::string model = dir.path() + "/qwen3-tts-tiny-random";
  const testing::CliRun made = testing::run_built("benchmarks/izwi-make-checkpoint",
                                                  "--arch qwen3_tts --preset tiny --dtype f32 --seed 3 --out " + model);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::filesystem::exists(model + "/config.json"));
  EXPECT_TRUE(std::filesystem::exists(model + "/model.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(model + "/speech_tokenizer/config.json"));
  EXPECT_TRUE(std::filesystem::exists(model + "/speech_tokenizer/model.safetensors"));

  const testing::CliRun run =
      testing::run_built("benchmarks/izwi-tts-bench",
                         "--model " + model + " --concurrency 1,2 --frames 12 --chunk-frames 2 --threads 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::last_line(run.out));
  EXPECT_GT(report.at("bandwidth_gbps").get<double>(), 0.0);
  EXPECT_EQ(report.at("bandwidth_samples_gbps").size(), 2u);
  EXPECT_GT(report.at("weight_bytes_per_frame").get<int64_t>(), 0);
  EXPECT_GT(report.at("resident_weight_bytes").get<int64_t>(), 0);  // ModelInfo::weight_bytes, codec included
  EXPECT_GT(report.at("roofline_frames_per_s").get<double>(), 0.0);
  EXPECT_GT(report.at("roofline_fraction").get<double>(), 0.0);
  EXPECT_GT(report.at("codec_ms_per_frame").get<double>(), 0.0);
  EXPECT_GT(report.at("frame_ms").get<double>(), 0.0);
  EXPECT_GT(report.at("codec_share").get<double>(), 0.0);
  EXPECT_GT(report.at("fma_peak_gflops").get<double>(), 0.0);
  EXPECT_GT(report.at("gflop_per_frame").get<double>(), 0.0);
  EXPECT_EQ(report.at("frames").get<int>(), 12);
  EXPECT_EQ(report.at("chunk_frames").get<int>(), 2);
  EXPECT_EQ(report.at("samples_per_frame").get<int>(), 1920);
  EXPECT_EQ(report.at("sample_rate").get<int>(), 24000);
  EXPECT_GT(report.at("threads").get<int>(), 0);
  const nlohmann::json& results = report.at("results");
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& r = results[i];
    EXPECT_EQ(r.at("concurrency").get<int>(), static_cast<int>(i + 1));
    EXPECT_GT(r.at("frames_per_s").get<double>(), 0.0);
    EXPECT_GT(r.at("frames_per_s_per_stream").get<double>(), 0.0);
    EXPECT_GT(r.at("compute_fraction").get<double>(), 0.0);
    EXPECT_GT(r.at("wall_frames_per_s").get<double>(), 0.0);
    EXPECT_GT(r.at("rtf_p50").get<double>(), 0.0);
    EXPECT_GE(r.at("rtf_max").get<double>(), r.at("rtf_p50").get<double>());
    EXPECT_GT(r.at("rtf_aggregate").get<double>(), 0.0);
    EXPECT_GT(r.at("ttfa_p50_ms").get<double>(), 0.0);
    EXPECT_GE(r.at("ttfa_p99_ms").get<double>(), r.at("ttfa_p50_ms").get<double>());
    EXPECT_GT(r.at("wall_s").get<double>(), 0.0);
    EXPECT_GT(r.at("speedup_vs_1").get<double>(), 0.0);
    // A step is a frame of every stream: the talker, sampling (the code predictor) and, on the
    // steps that complete a chunk, the codec, all inside it.
    const nlohmann::json& step = r.at("step_ms");
    EXPECT_GT(step.at("forward").get<double>(), 0.0);
    EXPECT_GT(step.at("sample").get<double>(), 0.0);
    EXPECT_GT(step.at("audio_decode").get<double>(), 0.0);
    EXPECT_GE(step.at("step").get<double>(), step.at("forward").get<double>() + step.at("sample").get<double>() +
                                                 step.at("audio_decode").get<double>());
  }
  EXPECT_GT(report.at("codec_linear_gflop_per_frame").get<double>(), 0.0);
  EXPECT_GT(report.at("compute_ceiling_frames_per_s").get<double>(), 0.0);
}

// The FLOPs of a frame come from the engine's linear products (talker and code predictor, the
// codec's taken out), not from the weight bytes: a bf16 checkpoint that "auto" keeps bf16 reads
// half the bytes of its float32 twin for the same FLOPs. Each matrix a frame reads is used once
// (one row), so the float32 bytes / 4 are about the multiply-adds; the figure the bench reported
// before (bytes over an assumed 4 a weight) was half of it for bf16.
TEST(CliTtsBench, FlopsFollowTheProductsNotTheWeightBytes) {
  testing::TempDir dir;
  std::map<std::string, nlohmann::json> reports;
  for (const std::string dtype : {"f32", "bf16"}) {
    const std::string model = dir.path() + "/qwen3-tts-tiny-" + dtype;
    const testing::CliRun made =
        testing::run_built("benchmarks/izwi-make-checkpoint",
                           "--arch qwen3_tts --preset tiny --dtype " + dtype + " --seed 3 --out " + model);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const testing::CliRun run =
        testing::run_built("benchmarks/izwi-tts-bench",
                           "--model " + model + " --concurrency 1 --frames 6 --chunk-frames 2 --threads 1 --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    reports[dtype] = nlohmann::json::parse(testing::last_line(run.out));
  }
  const double f32 = reports["f32"].at("gflop_per_frame").get<double>();
  const double bf16 = reports["bf16"].at("gflop_per_frame").get<double>();
  const int64_t f32_bytes = reports["f32"].at("weight_bytes_per_frame").get<int64_t>();
  EXPECT_EQ(reports["bf16"].at("weight_bytes_per_frame").get<int64_t>() * 2, f32_bytes);
  EXPECT_NEAR(bf16, f32, 1e-12);
  const double from_f32_bytes = 2.0 * static_cast<double>(f32_bytes) / 4 / 1e9;
  EXPECT_NEAR(f32, from_f32_bytes, 0.05 * from_f32_bytes);
  // The codec's products are its own figure, not part of the frame's.
  EXPECT_GT(reports["f32"].at("codec_linear_gflop_per_frame").get<double>(), 0.0);
}

TEST(CliTtsBench, BadArgumentsAreNamed) {
  testing::TempDir dir;
  const testing::CliRun no_model =
      testing::run_built("benchmarks/izwi-tts-bench", "--model " + dir.path() + "/missing --concurrency 1");
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_NE(no_model.err.find("missing"), std::string::npos) << no_model.err;
  const testing::CliRun bad_frames =
      testing::run_built("benchmarks/izwi-tts-bench", "--model " + dir.path() + " --frames 1");
  EXPECT_EQ(bad_frames.exit_code, 1);
  EXPECT_NE(bad_frames.err.find("--frames"), std::string::npos) << bad_frames.err;
  const testing::CliRun bad_levels =
      testing::run_built("benchmarks/izwi-tts-bench", "--model " + dir.path() + " --concurrency 1,x");
  EXPECT_EQ(bad_levels.exit_code, 1);
  EXPECT_NE(bad_levels.err.find("--concurrency"), std::string::npos) << bad_levels.err;
  // A text model is not a speech synthesis model.
  const std::string llama = dir.path() + "/llama";
  ASSERT_EQ(
      testing::run_built("benchmarks/izwi-make-checkpoint", "--arch llama --preset tiny --out " + llama).exit_code, 0);
  const testing::CliRun text_model = testing::run_built("benchmarks/izwi-tts-bench", "--model " + llama);
  EXPECT_EQ(text_model.exit_code, 1);
  EXPECT_NE(text_model.err.find("speech"), std::string::npos) << text_model.err;
}

}  // namespace
}  // namespace izwi
