#pragma once
// tokenizer.json "model" of type BPE, as the Hugging Face tokenizers library defines it:
// unk_token, fuse_unk, byte_fallback, continuing_subword_prefix, end_of_word_suffix,
// ignore_merges (dropout only matters in training and is ignored). Byte-level vocabularies (a
// ByteLevel pre-tokenizer) work on raw bytes: the vocabulary is converted out of GPT-2's alphabet
// once at load. Other vocabularies (SentencePiece style) start from one symbol per character.

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/token_cache.h"
#include "tokenizer/token_ids.h"

namespace izwi {

class BpeModel {
 public:
  /// Parses the "model" value; InvalidFormat / Unsupported naming `origin` and the field.
  /// `byte_level`: pre-tokens are raw bytes that the ByteLevel pre-tokenizer maps to the alphabet.
  static BpeModel from_json(const nlohmann::json& model, const std::string& origin, bool byte_level);

  /// Appends the ids of one pre-token (raw bytes for a byte-level model, else text).
  void encode_piece(std::string_view piece, std::vector<int32_t>& ids) const;

  /// Lets encode_piece cut a long pre-token before each `replacement` that follows another
  /// character (SentencePiece's word starts), where that provably gives the same ids: the
  /// replacement is a token and no merge joins a symbol to a following one that starts with it.
  void allow_cuts_before(const std::string& replacement);

  /// Vocabulary as stored in the file -> id.
  const TokenIds& vocab() const { return vocab_; }

 private:
  void encode_word(std::string_view piece, std::vector<int32_t>& ids) const;
  void init_chars(std::string_view word, std::vector<bpe::Symbol>& symbols) const;
  std::optional<int32_t> find(std::string_view token) const { return vocab_.find(token); }

  TokenIds vocab_;
  std::unordered_map<uint64_t, bpe::Merge> merges_;  ///< (left id << 32 | right id) -> merge
  bool byte_level_ = false;
  bool raw_bytes_ = false;               ///< byte-level fast path: one symbol per byte
  std::array<int32_t, 256> byte_ids_{};  ///< raw_bytes_: id of each byte
  std::array<int32_t, 256> fallback_{};  ///< byte_fallback: id of "<0xAB>", -1 if absent
  std::vector<int32_t> bmp_ids_;         ///< no prefix / suffix: id of each BMP character, -1 if none
  std::optional<int32_t> unk_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::string prefix_, suffix_;
  std::string cut_before_;
  std::unique_ptr<TokenCache> cache_ = std::make_unique<TokenCache>();
};

}  // namespace izwi
