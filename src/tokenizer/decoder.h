#pragma once
// tokenizer.json "decoder", as the Hugging Face tokenizers library defines each type: ByteLevel,
// Replace, ByteFallback, Fuse, Strip, Metaspace and Sequence of them. Each step maps the list of
// token strings to a new list (decode_chain); the text is their concatenation.

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace izwi {

class Decoder {
 public:
  /// Parses the "decoder" value; Unsupported naming any other type. A null value decodes as the
  /// library does without a decoder: the tokens joined by spaces.
  static Decoder from_json(const nlohmann::json& value, const std::string& origin);

  /// True when decoding is the concatenation of byte_level::decode of each token (ByteLevel alone),
  /// which the tokenizer does without this class.
  bool byte_level_only() const;

  /// The text of `tokens` (vocabulary spelling), as tokenizers' Decoder::decode gives it.
  std::string decode(std::vector<std::string> tokens) const;

  /// The bytes one token stands for in the middle of a text (for streaming): each step applied to
  /// the token alone, byte tokens as their byte, without the steps that only act at the start of
  /// the text or on the fused whole (a Strip after Fuse, Metaspace's first-token rule).
  /// `first`: the token starts the text (Metaspace drops its replacement characters).
  std::string token_bytes(const std::string& token, bool first = false) const;

  /// How many leading spaces decode() removes from the start of the text beyond token_bytes: a
  /// Strip of spaces after the tokens are fused.
  size_t leading_spaces_stripped() const;

 private:
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace };
  struct Step {
    Kind kind = Kind::Fuse;
    std::shared_ptr<const Regex> regex;  ///< Replace
    std::string content;                 ///< Replace: the replacement; Strip, Metaspace: the character
    size_t start = 0, stop = 0;          ///< Strip
    bool strip_first = false;            ///< Metaspace: prepend_scheme is not "never"
  };
  void parse(const nlohmann::json& value, const std::string& origin);

  std::vector<Step> steps_;
  bool none_ = false;
};

}  // namespace izwi
