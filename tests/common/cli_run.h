#pragma once
// Runs a built binary (build/examples/izwi-<name>, build/benchmarks/...) the way a user's shell would.

#include <string>
#include <utility>
#include <vector>

#include "common/shell_quote.h"

namespace izwi::testing {

struct CliRun {
  int exit_code = 0;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs `IZWI_BINARY_DIR/examples/<binary> <args>`; `args` go through the shell as written.
CliRun run_example(const std::string& binary, const std::string& args);
/// Runs `IZWI_BINARY_DIR/<path> <args>` (e.g. "benchmarks/izwi-bench").
CliRun run_built(const std::string& path, const std::string& args);

/// Runs `binary` with each case's arguments and expects a non-zero exit and stderr containing
/// the case's expected text (gtest failures name the arguments).
void expect_cli_errors(const std::string& binary, const std::vector<std::pair<std::string, std::string>>& cases);

/// The last non-empty line of a program's output (where the CLIs print their JSON report).
std::string last_line(const std::string& out);

using cli::shell_quoted;

}  // namespace izwi::testing
