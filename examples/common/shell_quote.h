#pragma once
// Quoting for command lines the binaries and tests hand to the shell (popen, system).

#include <string>

namespace izwi::cli {

/// `s` single-quoted for the shell.
inline std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace izwi::cli
