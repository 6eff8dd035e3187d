#pragma once
// tokenizer.json "pre_tokenizer": Split (regex or literal, Isolated), ByteLevel (with its own
// GPT-2 regex and add_prefix_space) and Sequence of them.

#include <nlohmann/json.hpp>

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace izwi {

/// Pre-tokens of one text: views into the text or into `storage` (pieces given a prefix space).
struct PreTokens {
  std::vector<std::string_view> pieces;
  std::deque<std::string> storage;
};

class PreTokenizer {
 public:
  /// Parses the "pre_tokenizer" value; Unsupported naming any other type or option. Byte-level
  /// BPE needs a ByteLevel step, so its absence is Unsupported too.
  static PreTokenizer from_json(const nlohmann::json& value, const std::string& origin);

  void split(std::string_view text, PreTokens& out) const;

 private:
  struct Step {
    std::shared_ptr<const Regex> regex;  ///< null = no splitting
    bool add_prefix_space = false;
  };
  void parse(const nlohmann::json& value, const std::string& origin, bool& has_byte_level);

  std::vector<Step> steps_;
};

}  // namespace izwi
