// The izwi-generate command line contract that outside checks rely on.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <sstream>

#include "common/reference.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

struct CliRun {
  int exit_code;
  std::string out;  ///< stdout and stderr together
};

CliRun run_cli(const std::string& args) {
  const std::string command = std::string(IZWI_BINARY_DIR) + "/examples/izwi-generate " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  return {WEXITSTATUS(status), output};
}

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

TEST(CliGenerate, JsonLinesInIndexOrderMatchTheReference) {
  testing::ReferenceTensors ref("llama-tiny");
  testing::TempDir dir;
  std::string file;
  for (int c = 0; c < 7; ++c) file += join(ref.ids("case" + std::to_string(c) + ".prompt")) + "\n";
  const std::string prompts = dir.write("prompts.txt", file);
  for (const char* mode : {"", "--sequential"}) {
    const CliRun run = run_cli("--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids-file " + prompts +
                            " --max-tokens 24 --min-tokens 24 --json " + mode);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    std::istringstream lines(run.out);
    std::string line;
    int index = 0;
    while (std::getline(lines, line)) {
      const nlohmann::json j = nlohmann::json::parse(line);
      EXPECT_EQ(j.at("index").get<int>(), index);
      EXPECT_EQ(j.at("tokens").get<std::vector<int32_t>>(), ref.ids("case" + std::to_string(index) + ".generated"));
      EXPECT_EQ(j.at("finish_reason").get<std::string>(), "length");
      EXPECT_TRUE(j.at("prefix_cache_hit_tokens").is_number_integer());
      EXPECT_GE(j.at("ttft_ms").get<double>(), 0.0);
      ++index;
    }
    EXPECT_EQ(index, 7) << mode;
  }
}

TEST(CliGenerate, PromptIdsAndSamplingFlags) {
  const CliRun greedy = run_cli("--model " + testing::fixture_dir("qwen3-tiny") + " --prompt-ids 1,2,3 --max-tokens 5 --json");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.out;
  EXPECT_EQ(nlohmann::json::parse(greedy.out).at("tokens").size(), 5u);
  const std::string sampled = "--model " + testing::fixture_dir("qwen3-tiny") +
                              " --prompt-ids 1,2,3 --max-tokens 8 --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7 --json";
  const CliRun a = run_cli(sampled), b = run_cli(sampled);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out.substr(0, a.out.find("ttft")), b.out.substr(0, b.out.find("ttft")));
}

TEST(CliGenerate, ErrorsGoToStderrWithANonZeroExit) {
  const std::string model = "--model " + testing::fixture_dir("llama-tiny");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--prompt-ids 1,2", "--model is required"},
      {model, "one of --prompt-ids or --prompt-ids-file is required"},
      {model + " --prompt-ids 1,x,3", "'x' is not a token id"},
      {model + " --prompt-ids 1,,3", "empty entry"},
      {model + " --prompt-ids 1,99999", "outside the vocabulary"},
      {model + " --prompt-ids-file /no/such/file", "cannot open prompt file"},
      {"--model /no/such/model --prompt-ids 1", "does not exist"},
      {model + " --prompt-ids 1 --top-p 2", "top_p"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun run = run_cli(args);
    EXPECT_NE(run.exit_code, 0) << args;
    EXPECT_NE(run.out.find(expected), std::string::npos) << args << " printed: " << run.out;
  }
}

}  // namespace
}  // namespace izwi
