// The engine tools run with a short OpenMP spin-wait (GOMP_SPINCOUNT=1000, docs/cli.md) unless
// the environment sets GOMP_SPINCOUNT or OMP_WAIT_POLICY. libgomp reads it before main, so a tool
// re-executes itself once with it set: what counts is the environment of the process that runs,
// read here from /proc while izwi-chat waits for its first line.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"

namespace izwi {
namespace {

/// The GOMP_SPINCOUNT= line of a running izwi-chat's environment ("" when unset), started with
/// `env` (an env(1) argument list) and holding at its "> " prompt.
std::string spin_count_of_running_chat(const std::string& env) {
  testing::TempDir dir;
  const std::string model = testing::write_text_model(dir.path() + "/model");
  const std::string chat = std::string(IZWI_BINARY_DIR) + "/examples/izwi-chat --model " + model;
  const std::string fifo = dir.file("stdin"), out = dir.file("stdout");
  // The writer (fd 3) keeps the chat waiting for input until the environment has been read.
  const std::string script = "mkfifo " + fifo + "; env " + env + " " + chat + " < " + fifo + " > " + out +
                             " 2>&1 & pid=$!; exec 3>" + fifo + "; for i in $(seq 600); do grep -q '> ' " + out +
                             " && break; sleep 0.1; done; tr '\\0' '\\n' < /proc/$pid/environ | grep "
                             "'^GOMP_SPINCOUNT='; exec 3>&-; wait $pid";
  FILE* pipe = ::popen(("sh -c " + testing::shell_quoted(script)).c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe == nullptr) return {};
  std::string text;
  std::array<char, 256> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
  ::pclose(pipe);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

TEST(CliSpinPolicy, ToolsRunWithAShortSpinUnlessTheEnvironmentSetsOne) {
  EXPECT_EQ(spin_count_of_running_chat("-u GOMP_SPINCOUNT -u OMP_WAIT_POLICY"), "GOMP_SPINCOUNT=1000");
  EXPECT_EQ(spin_count_of_running_chat("-u OMP_WAIT_POLICY GOMP_SPINCOUNT=300000"), "GOMP_SPINCOUNT=300000");
  EXPECT_EQ(spin_count_of_running_chat("-u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE"), "");
}

}  // namespace
}  // namespace izwi
