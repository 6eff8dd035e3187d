// The izwi-make-checkpoint and izwi-bench command line contracts: a random checkpoint the
// engine loads, and the bench's JSON report with the keys outside checks read.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "common/cli_run.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

TEST(CliBench, MakeCheckpointThenBenchReportsEveryContractKey) {
  testing::TempDir dir;
  const std::string model = dir.path() + "/llama-tiny-random";
  const testing::CliRun made = testing::run_built("benchmarks/izwi-make-checkpoint",
                                                  "--arch llama --preset tiny --dtype f32 --seed 3 --out " + model);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::filesystem::exists(model + "/config.json"));
  EXPECT_TRUE(std::filesystem::exists(model + "/model.safetensors"));

  // --kernels both also runs the plain libtorch path in a child process. 256 tokens each: with 24,
  // and once with 64, a loaded machine let the reader of one stream see all its tokens before the
  // other's first (the tiny model makes a token in well under a millisecond), and the bench
  // rightly found no window in which both decode.
  const testing::CliRun run = testing::run_built(
      "benchmarks/izwi-bench",
      "--model " + model + " --concurrency 1,2 --prompt-len 8 --gen 256 --shared-prefix 32 --kernels both --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::last_line(run.out));
  EXPECT_GT(report.at("bandwidth_gbps").get<double>(), 0.0);
  EXPECT_GT(report.at("weight_bytes").get<int64_t>(), 0);
  EXPECT_GT(report.at("load_peak_rss_bytes").get<int64_t>(),
            report.at("weight_bytes").get<int64_t>() + report.at("kv_cache_bytes").get<int64_t>());
  EXPECT_GT(report.at("kv_cache_bytes").get<int64_t>(), 0);
  EXPECT_GT(report.at("roofline_fraction").get<double>(), 0.0);
  EXPECT_GT(report.at("torch_tokens_per_s").get<double>(), 0.0);
  EXPECT_GT(report.at("fma_peak_gflops").get<double>(), 0.0);
  EXPECT_EQ(report.at("device").get<std::string>(), "cpu");
  EXPECT_EQ(report.at("dtype").get<std::string>(), "float32");
  const nlohmann::json& results = report.at("results");
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].at("concurrency").get<int>(), static_cast<int>(i + 1));
    EXPECT_GT(results[i].at("tokens_per_s").get<double>(), 0.0);
    EXPECT_GT(results[i].at("model_gflop_per_s").get<double>(), 0.0);
    EXPECT_GT(results[i].at("model_compute_fraction").get<double>(), 0.0);
    EXPECT_GT(results[i].at("linear_gflop_per_s").get<double>(), 0.0);
    EXPECT_GT(results[i].at("compute_fraction").get<double>(), 0.0);
    EXPECT_GE(results[i].at("ttft_p99_ms").get<double>(), results[i].at("ttft_p50_ms").get<double>());
    // The step breakdown: the parts nest inside the step.
    const nlohmann::json& step = results[i].at("decode_step");
    EXPECT_GT(step.at("steps").get<int>(), 0);
    EXPECT_GT(step.at("linear_ms").get<double>(), 0.0);
    EXPECT_GT(step.at("attention_ms").get<double>(), 0.0);
    EXPECT_GE(step.at("step_ms").get<double>(),
              step.at("linear_ms").get<double>() + step.at("attention_ms").get<double>());
  }
  EXPECT_EQ(report.at("shared_prefix").at("cached_tokens").get<int>(), 32);
  // The tiny preset holds 512 positions: the 512-token default prefill is cut to 511.
  EXPECT_EQ(report.at("prefill").at("prompt_tokens").get<int>(), 511);
  EXPECT_GT(report.at("prefill").at("ttft_ms").get<double>(), 0.0);
  EXPECT_GT(report.at("prefill").at("linear_gflop_per_s").get<double>(), 0.0);
  EXPECT_GT(report.at("prefill").at("compute_fraction").get<double>(), 0.0);
  const double attention_share = report.at("prefill").at("attention_share_of_ttft").get<double>();
  EXPECT_GT(attention_share, 0.0);
  EXPECT_LT(attention_share + report.at("prefill").at("linear_share_of_ttft").get<double>(), 1.0);
}

TEST(CliBench, BadArgumentsAreNamed) {
  testing::TempDir dir;
  const testing::CliRun unknown_preset = testing::run_built(
      "benchmarks/izwi-make-checkpoint", "--arch llama --preset 7b --dtype f32 --out " + dir.path() + "/x");
  EXPECT_NE(unknown_preset.exit_code, 0);
  EXPECT_NE(unknown_preset.err.find("7b"), std::string::npos) << unknown_preset.err;
  const testing::CliRun bad_kernels =
      testing::run_built("benchmarks/izwi-bench", "--model " + dir.path() + " --kernels fastest");
  EXPECT_NE(bad_kernels.exit_code, 0);
  EXPECT_NE(bad_kernels.err.find("--kernels"), std::string::npos) << bad_kernels.err;
  const testing::CliRun bad_variant =
      testing::run_built("benchmarks/izwi-bench", "--model " + dir.path() + " --cpu-kernels sse");
  EXPECT_EQ(bad_variant.exit_code, 1);
  EXPECT_NE(bad_variant.err.find("cpu_kernels"), std::string::npos) << bad_variant.err;
  // Checked before any probe or load: a device this libtorch lacks, a dtype the engine lacks.
  const testing::CliRun no_gpu =
      testing::run_built("benchmarks/izwi-bench", "--model " + dir.path() + " --device cuda");
  EXPECT_EQ(no_gpu.exit_code, 1);
  EXPECT_NE(no_gpu.err.find("device 'cuda'"), std::string::npos) << no_gpu.err;
  const testing::CliRun bad_dtype =
      testing::run_built("benchmarks/izwi-bench", "--model " + dir.path() + " --dtype f8");
  EXPECT_EQ(bad_dtype.exit_code, 1);
  EXPECT_NE(bad_dtype.err.find("dtype"), std::string::npos) << bad_dtype.err;
  const testing::CliRun no_model =
      testing::run_built("benchmarks/izwi-bench", "--model " + dir.path() + "/missing --concurrency 1");
  EXPECT_NE(no_model.exit_code, 0);
  EXPECT_NE(no_model.err.find("missing"), std::string::npos) << no_model.err;
}

}  // namespace
}  // namespace izwi
