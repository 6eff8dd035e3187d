// The izwi-weight-dtype-bench command line contract: on the llama-tiny fixture, every dtype asked
// for is reported in order, the first as the ratios' base, each narrower dtype reading fewer bytes
// a step; bad arguments exit 1 naming the flag.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"

namespace izwi {
namespace {

const std::string kModel = std::string(IZWI_TEST_DATA_DIR) + "/llama-tiny";

TEST(CliWeightDtypeBench, InterleavedRoundsReportEveryDtypeAgainstTheFirst) {
  const testing::CliRun run = testing::run_built(
      "benchmarks/izwi-weight-dtype-bench",
      "--model " + kModel + " --weight-dtypes auto,int8,int4 --rounds 2 --tokens 4 --threads 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::last_line(run.out));
  EXPECT_EQ(report.at("rounds").get<int>(), 2);
  EXPECT_EQ(report.at("tokens").get<int>(), 4);
  EXPECT_GT(report.at("bandwidth_gbps_p50").get<double>(), 0.0);
  const nlohmann::json& results = report.at("results");
  ASSERT_EQ(results.size(), 3u);
  const std::vector<std::string> names{"auto", "int8", "int4"};
  for (size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& r = results[i];
    EXPECT_EQ(r.at("weight_dtype"), names[i]);
    EXPECT_GT(r.at("tokens_per_s_p50").get<double>(), 0.0);
    EXPECT_GT(r.at("roofline_fraction_p50").get<double>(), 0.0);
    EXPECT_LE(r.at("ratio_min").get<double>(), r.at("ratio_p50").get<double>());
    EXPECT_GE(r.at("ratio_max").get<double>(), r.at("ratio_p50").get<double>());
    if (i > 0) EXPECT_LT(r.at("mb_per_step").get<double>(), results[i - 1].at("mb_per_step").get<double>());
  }
  // The base's ratio to itself is exactly one in every round.
  EXPECT_EQ(results[0].at("ratio_min").get<double>(), 1.0);
  EXPECT_EQ(results[0].at("ratio_max").get<double>(), 1.0);
}

TEST(CliWeightDtypeBench, BadArgumentsAreNamed) {
  const testing::CliRun one = testing::run_built("benchmarks/izwi-weight-dtype-bench",
                                                 "--model " + kModel + " --weight-dtypes int8 --rounds 1");
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.err.find("--weight-dtypes"), std::string::npos) << one.err;
  const testing::CliRun empty =
      testing::run_built("benchmarks/izwi-weight-dtype-bench", "--model " + kModel + " --weight-dtypes auto,,int8");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("--weight-dtypes"), std::string::npos) << empty.err;
  const testing::CliRun rounds =
      testing::run_built("benchmarks/izwi-weight-dtype-bench", "--model " + kModel + " --rounds 0");
  EXPECT_EQ(rounds.exit_code, 1);
  EXPECT_NE(rounds.err.find("--rounds"), std::string::npos) << rounds.err;
}

}  // namespace
}  // namespace izwi
