#pragma once
// tokenizer.json "pre_tokenizer", as the Hugging Face tokenizers library defines each type:
// Split (regex or literal, every behaviour, invert), ByteLevel (GPT-2 regex, add_prefix_space),
// Metaspace (prepend_scheme always / first / never, split), Whitespace, WhitespaceSplit, Digits,
// Punctuation and Sequence of them.

#include <nlohmann/json.hpp>

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace izwi {

/// Pre-tokens of one text: views into the text or into `storage` (pieces a step rewrote).
struct PreTokens {
  std::vector<std::string_view> pieces;
  std::deque<std::string> storage;
  bool first_at_origin = false;  ///< pieces[0] starts at offset 0 of the whole input text
};

/// What Split and friends do with the delimiters they find (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

class PreTokenizer {
 public:
  /// Parses the "pre_tokenizer" value (null = the whole text is one pre-token); Unsupported
  /// naming any other type or option.
  static PreTokenizer from_json(const nlohmann::json& value, const std::string& origin);

  /// Splits `text`; `at_origin` tells whether it starts at offset 0 of the input (for Metaspace's
  /// prepend_scheme "first").
  void split(std::string_view text, bool at_origin, PreTokens& out) const;

  /// Whether a ByteLevel step maps the bytes to GPT-2's alphabet (then the model is byte-level).
  bool byte_level() const { return byte_level_; }
  /// Whether no step splits (so the model sees whole texts).
  bool splits() const { return !steps_.empty(); }
  /// The Metaspace replacement character (UTF-8) if a Metaspace step exists, else "".
  const std::string& metaspace() const { return metaspace_; }

 private:
  enum class Kind { Regex, Whitespace, Numeric, Punctuation, ByteLevel, Metaspace };
  struct Step {
    Kind kind = Kind::Regex;
    std::shared_ptr<const Regex> regex;  ///< Regex, ByteLevel (null = no regex)
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  ///< ByteLevel
    int prepend = 0;                ///< Metaspace: 0 never, 1 first, 2 always
    bool metaspace_split = true;
  };
  void parse(const nlohmann::json& value, const std::string& origin);
  void apply(const Step& step, std::string_view piece, bool at_origin, PreTokens& out,
             std::vector<std::string_view>& next, bool* first_at_zero) const;

  std::vector<Step> steps_;
  bool byte_level_ = false;
  std::string metaspace_;
};

}  // namespace izwi
