#pragma once
// The error contract every izwi command line shares: failures go to stderr as
// "<program>: <what>" (with the izwi error kind when there is one) and exit with code 1.

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "izwi/errors.h"

namespace izwi::cli {

/// Runs `body` (returning the exit code) and turns any exception into the error contract.
template <typename Body>
int run_main(const char* program, Body&& body) {
  try {
    return body();
  } catch (const izwi::Error& e) {
    std::cerr << program << ": " << izwi::to_string(e.code()) << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
  }
  return 1;
}

/// The program name for messages: argv[0] without its folder.
inline std::string program_name(const char* argv0) {
  const std::string path = argv0 != nullptr ? argv0 : "izwi";
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Parses the command line. Returns -1 to go on, or the exit code to return at once: 0 after
/// --help (printed by CLI11), 1 after "<program>: <message>" on stderr for any parsing error
/// (CLI11's own exit codes, 100 and up, are not part of the contract).
inline int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    std::cerr << program_name(argc > 0 ? argv[0] : nullptr) << ": " << e.what() << "\n"
              << "Run with --help for more information.\n";
    return 1;
  }
}

}  // namespace izwi::cli

// Every izwi binary parses with CLI11_PARSE after including this header: route it through the
// error contract above instead of CLI11's default (its exit codes, 105-114, and bare messages).
#undef CLI11_PARSE
#define CLI11_PARSE(app, argc, argv)                                                    \
  do {                                                                                  \
    const int izwi_cli_parse_status = ::izwi::cli::parse_command_line(app, argc, argv); \
    if (izwi_cli_parse_status >= 0) return izwi_cli_parse_status;                       \
  } while (false)
