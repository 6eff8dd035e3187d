#pragma once
// Runs a built example binary (build/examples/izwi-<name>) the way a user's shell would.

#include <string>

namespace izwi::testing {

struct CliRun {
  int exit_code = 0;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs `IZWI_BINARY_DIR/examples/<binary> <args>`; `args` go through the shell as written.
CliRun run_example(const std::string& binary, const std::string& args);

/// `s` single-quoted for the shell.
std::string shell_quoted(const std::string& s);

}  // namespace izwi::testing
