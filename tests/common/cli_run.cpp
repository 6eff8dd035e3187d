#include "common/cli_run.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/temp_dir.h"

namespace izwi::testing {

CliRun run_example(const std::string& binary, const std::string& args) {
  TempDir scratch;
  const std::string command =
      std::string(IZWI_BINARY_DIR) + "/examples/" + binary + " " + args + " 2>" + scratch.file("stderr");
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

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace izwi::testing
