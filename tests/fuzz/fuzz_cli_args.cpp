// Fuzz target: the argument parsing helpers the example binaries share
// (examples/common/cli_parsing.h). parse_id_list either returns ids that print back to an
// equivalent list (same count, same values when re-parsed) or throws std::invalid_argument.
// Each CLI's own option parser runs in main() and is covered by the CLI contract tests
// (tests/integration/test_cli_*.cpp, which spawn the binaries), not fuzzed in-process.

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../examples/common/cli_parsing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The bytes split at NUL like an argv; each argument is parsed as an id list.
  const std::string all(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    const std::string arg = all.substr(start, end - start);
    start = end + 1;
    std::vector<int32_t> ids;
    try {
      ids = izwi::cli::parse_id_list(arg, "--ids");
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (ids.empty()) std::abort();  // an accepted list has at least one id
    size_t commas = 0;
    for (char c : arg) commas += c == ',';
    if (ids.size() != commas + 1) std::abort();  // one id per comma-separated entry
    std::string printed;
    for (size_t i = 0; i < ids.size(); ++i) printed += (i ? "," : "") + std::to_string(ids[i]);
    if (izwi::cli::parse_id_list(printed, "--ids") != ids) std::abort();  // round trip
  }
  return 0;
}
