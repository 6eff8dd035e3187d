#pragma once
// The error contract every izwi command line shares: failures go to stderr as
// "<program>: <what>" (with the izwi error kind when there is one) and exit with code 1.

#include <CLI/CLI.hpp>

#include <cctype>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "izwi/errors.h"

namespace izwi::cli {

/// Library names (request fields, EngineConfig fields) and the flag a user types for each.
using FlagNames = std::vector<std::pair<std::string, std::string>>;

/// The names every tool maps: its shared options (common/shared_options.h) and the model folder.
inline const FlagNames& shared_flag_names() {
  static const FlagNames names = [] {
    FlagNames n = {
        {"model folder '", "--model '"},
        {"tokenizer folder '", "--model '"},
        {"EngineConfig.device", "--device"},
        {"EngineConfig.dtype", "--dtype"},
        {"EngineConfig.weight_dtype", "--weight-dtype"},
        {"EngineConfig.num_threads", "--threads"},
        {"EngineConfig.num_kv_blocks", "--kv-blocks"},
        {"num_kv_blocks", "--kv-blocks"},
        {"params.max_tokens", "--max-tokens"},
        {"params.min_tokens", "--min-tokens"},
    };
    // The main sampling head of every request kind is what the shared sampling flags set.
    for (const char* head : {"params.sampling", "TranscriptionOptions.sampling", "SpeechParams.sampling",
                             "AudioChatRequest.text_sampling"}) {
      for (const char* field : {"temperature", "top_k", "top_p", "repetition_penalty"}) {
        std::string flag = std::string("--") + field;
        for (char& c : flag) c = c == '_' ? '-' : c;
        n.push_back({std::string(head) + "." + field, flag});
      }
    }
    return n;
  }();
  return names;
}

/// `message` with each whole library name of `names` (then the shared ones) replaced by its flag:
/// a name starting (ending) with a letter, digit or '_' matches where no such character or '.'
/// precedes it (no such character follows it), so "text_ids" leaves "reference_text_ids" alone.
inline std::string in_cli_terms(std::string message, const FlagNames& names) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t pos = message.find(from); pos != std::string::npos; pos = message.find(from, pos)) {
      const size_t end = pos + from.size();
      const bool starts = pos == 0 || !word(from.front()) || (!word(message[pos - 1]) && message[pos - 1] != '.');
      const bool ends = end == message.size() || !word(from.back()) || !word(message[end]);
      if (starts && ends) {
        message.replace(pos, from.size(), to);
        pos += to.size();
      } else {
        pos = end;
      }
    }
  };
  for (const auto& [from, to] : names) replace_all(from, to);
  for (const auto& [from, to] : shared_flag_names()) replace_all(from, to);
  return message;
}

/// Runs `body` (returning the exit code) and turns any exception into the error contract, its
/// message in the tool's terms (`names`, then the shared names: in_cli_terms).
template <typename Body>
int run_main(const char* program, const FlagNames& names, Body&& body) {
  try {
    return body();
  } catch (const izwi::Error& e) {
    std::cerr << program << ": " << izwi::to_string(e.code()) << ": " << in_cli_terms(e.what(), names) << "\n";
  } catch (const std::exception& e) {
    std::cerr << program << ": " << in_cli_terms(e.what(), names) << "\n";
  }
  return 1;
}

/// run_main with the shared names only.
template <typename Body>
int run_main(const char* program, Body&& body) {
  return run_main(program, FlagNames{}, std::forward<Body>(body));
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
