#include "common/cli_run.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/temp_dir.h"

namespace izwi::testing {

CliRun run_example(const std::string& binary, const std::string& args) { return run_built("examples/" + binary, args); }

CliRun run_built(const std::string& path, const std::string& args) {
  TempDir scratch;
  const std::string command = std::string(IZWI_BINARY_DIR) + "/" + path + " " + args + " 2>" + scratch.file("stderr");
  FILE* pipe = ::popen(command.c_str(), "r");
  CliRun run;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) run.out.append(buffer.data(), n);
  run.exit_code = WEXITSTATUS(::pclose(pipe));
  std::ifstream err_in(scratch.file("stderr"));
  std::stringstream err;
  err << err_in.rdbuf();
  run.err = err.str();
  return run;
}

void expect_cli_errors(const std::string& binary, const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, expected] : cases) {
    const CliRun run = run_example(binary, args);
    EXPECT_NE(run.exit_code, 0) << binary << " " << args;
    EXPECT_NE(run.err.find(expected), std::string::npos) << binary << " " << args << " printed: " << run.err;
  }
}

std::string last_line(const std::string& out) {
  const size_t end = out.find_last_not_of('\n');
  if (end == std::string::npos) return {};
  const size_t begin = out.rfind('\n', end);
  return out.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

}  // namespace izwi::testing
