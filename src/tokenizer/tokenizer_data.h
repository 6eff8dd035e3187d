#pragma once
// A loaded vocabulary in the form both file formats (tokenizer.json, tekken.json) reduce to.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/text_model.h"

namespace izwi {

enum class TokenKind : uint8_t { Missing, Normal, Special };

struct TokenizerData {
  std::vector<std::string> id_bytes;  ///< raw bytes each id decodes to
  std::vector<TokenKind> kinds;       ///< Missing for ids the file leaves unused
  std::unordered_map<std::string, int32_t> token_ids;  ///< token as the file spells it -> id
  std::vector<AddedToken> added;      ///< matched in the text before the model runs
  std::unique_ptr<TextModel> model;
  PostProcessor post;                 ///< ids that add_special_tokens puts around the text
  bool tekken = false;

  /// Records id -> (bytes, kind), growing the tables as needed.
  void set(int32_t id, std::string bytes, TokenKind kind);
};

/// Parses a Hugging Face tokenizer.json held in memory; `origin` names it in errors.
TokenizerData load_tokenizer_json(std::string_view json_text, const std::string& origin);

/// Parses a Mistral tekken.json held in memory.
TokenizerData load_tekken_json(std::string_view json_text, const std::string& origin);

}  // namespace izwi
