#pragma once
// A loaded vocabulary in the form both file formats (tokenizer.json, tekken.json) reduce to.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/decoder.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/text_model.h"
#include "tokenizer/token_ids.h"

namespace izwi {

enum class TokenKind : uint8_t { Missing, Normal, Special };

struct TokenizerData {
  std::vector<std::string> id_bytes;  ///< raw bytes each id decodes to
  std::vector<TokenKind> kinds;       ///< Missing for ids the file leaves unused
  TokenIds token_ids;                 ///< token as the file spells it -> id
  std::vector<AddedToken> added;      ///< matched in the text before the model runs
  std::unique_ptr<TextModel> model;
  /// Decoder chain for tokenizer.json files whose decoder is not plain ByteLevel (null: decoding
  /// concatenates id_bytes). It reads the tokens as the file spells them, id_tokens.
  std::shared_ptr<const Decoder> decoder;
  std::vector<std::string> id_tokens;
  PostProcessor post;  ///< ids that add_special_tokens puts around the text
  bool tekken = false;

  /// Records id -> (bytes, kind), growing the tables as needed.
  void set(int32_t id, std::string bytes, TokenKind kind);
  void set_token(int32_t id, std::string token);
};

/// Parses a Hugging Face tokenizer.json held in memory; `origin` names it in errors.
TokenizerData load_tokenizer_json(std::string_view json_text, const std::string& origin);

/// The tokenizer of a parsed tokenizer.json document (also one synthesised from other files).
TokenizerData tokenizer_data_from_json(const nlohmann::json& doc, const std::string& origin);

/// A Qwen2 / GPT-2 style folder without tokenizer.json: vocab.json + merges.txt +
/// tokenizer_config.json, converted as transformers' Qwen2TokenizerFast / GPT2TokenizerFast
/// would convert them.
struct VocabMergesTokenizer {
  TokenizerData data;
  /// tokenizer_config.json, with the tokenizer class's default bos_token / eos_token filled in
  /// where the file leaves the key out and the default is a token of the vocabulary.
  nlohmann::json config;
};
VocabMergesTokenizer load_vocab_merges_dir(const std::string& dir);

/// A SentencePiece tokenizer.model (through libsentencepiece); bos/eos are those of the model.
TokenizerData load_sentencepiece_model(const std::string& path);

/// Parses a Mistral tekken.json held in memory.
TokenizerData load_tekken_json(std::string_view json_text, const std::string& origin);

}  // namespace izwi
