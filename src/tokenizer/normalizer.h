#pragma once
// tokenizer.json "normalizer": NFC, a Sequence of those, or none.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace izwi {

class Normalizer {
 public:
  /// Parses the "normalizer" value (null = identity); Unsupported naming any other type.
  static Normalizer from_json(const nlohmann::json& value, const std::string& origin);

  std::string apply(std::string_view text) const;

 private:
  bool nfc_ = false;  ///< NFC is idempotent, so a Sequence of NFCs is one NFC.
};

}  // namespace izwi
