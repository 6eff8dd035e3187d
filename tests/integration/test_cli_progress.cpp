// Progress on long work: on a terminal the engine tools draw a bar while the weights load; with
// --json, or when stderr is not a terminal, they print nothing extra.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "common/cli_run.h"
#include "common/reference.h"

namespace izwi {
namespace {

/// Everything a command writes to its terminal: run under script(1), which gives it a
/// pseudo-terminal for stdin, stdout and stderr.
std::string run_on_a_terminal(const std::string& command) {
  const std::string line = "script -qec " + testing::shell_quoted(command) + " /dev/null < /dev/null";
  FILE* pipe = ::popen(line.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  EXPECT_EQ(::pclose(pipe), 0) << out;
  return out;
}

const std::string kGenerate = std::string(IZWI_BINARY_DIR) + "/examples/izwi-generate --model " +
                              testing::fixture_dir("llama-tiny") + " --prompt-ids 1,2 --max-tokens 2";

TEST(CliProgress, ABarOnATerminalWhileTheWeightsLoad) {
  const std::string out = run_on_a_terminal(kGenerate);
  EXPECT_NE(out.find("\rloading llama-tiny ["), std::string::npos) << out;
  EXPECT_NE(out.find("] 100% "), std::string::npos) << out;
  EXPECT_NE(out.find("(length"), std::string::npos) << out;  // and the result after it
}

TEST(CliProgress, NoBarWithJsonOrWhenStderrIsNotATerminal) {
  const std::string json = run_on_a_terminal(kGenerate + " --json");
  EXPECT_EQ(json.find("loading"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tokens\""), std::string::npos) << json;
  const testing::CliRun piped = testing::run_example(
      "izwi-generate", "--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids 1,2 --max-tokens 2");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
}

}  // namespace
}  // namespace izwi
