#pragma once
// tokenizer.json "normalizer", as the Hugging Face tokenizers library defines each type: NFC, NFD,
// NFKC, NFKD, Lowercase, Strip, Prepend, Replace and Sequence of them (or none).

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"

namespace izwi {

class Normalizer {
 public:
  /// Parses the "normalizer" value (null = identity); Unsupported naming any other type.
  static Normalizer from_json(const nlohmann::json& value, const std::string& origin);

  /// The normalised text. `*kept_start` (if given) becomes false when a step removed the first
  /// characters of the text (Strip), so its first character no longer comes from offset 0.
  std::string apply(std::string_view text, bool* kept_start = nullptr) const;

 private:
  enum class Kind { Unicode, Lowercase, Strip, Prepend, Replace };
  struct Step {
    Kind kind = Kind::Unicode;
    utf8::Form form = utf8::Form::NFC;
    bool left = false, right = false;    ///< Strip
    std::string content;                 ///< Prepend, Replace
    std::shared_ptr<const Regex> regex;  ///< Replace
  };
  void parse(const nlohmann::json& value, const std::string& origin);

  std::vector<Step> steps_;
};

}  // namespace izwi
