#pragma once
// Small parsing helpers shared by the example binaries.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace izwi::cli {

/// "1, 2,3" -> {1, 2, 3}; throws std::invalid_argument naming `what` on anything else.
inline std::vector<int32_t> parse_id_list(const std::string& text, const std::string& what) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    const size_t first = item.find_first_not_of(" \t\r");
    const size_t last = item.find_last_not_of(" \t\r");
    item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    if (item.empty()) throw std::invalid_argument(what + ": empty entry in '" + text + "'");
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value < INT32_MIN || value > INT32_MAX) {
      throw std::invalid_argument(what + ": '" + item + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(value));
    pos = comma + 1;
  }
  return ids;
}

}  // namespace izwi::cli
