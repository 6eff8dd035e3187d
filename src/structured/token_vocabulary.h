#pragma once
// A model's vocabulary as the constrained decoder sees it: each token's bytes, in a trie, and the
// tokens that end the output. Tokenizer-independent; from_tokenizer reads an izwi::Tokenizer.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/tokenizer.h"
#include "structured/token_trie.h"

namespace izwi::structured {

class TokenVocabulary {
 public:
  /// `token_bytes[id]` for every id; tokens with no bytes (special tokens, holes) are never allowed,
  /// except `stop_ids`, which are allowed exactly when the document is complete.
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> stop_ids);
  /// Each id's bytes from the tokenizer; special tokens are never allowed. The stop ids are
  /// `stop_ids`, else the tokenizer's EOS ids.
  static TokenVocabulary from_tokenizer(const Tokenizer& tokenizer,
                                        std::optional<std::vector<int32_t>> stop_ids = std::nullopt);

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  const std::vector<int32_t>& stop_ids() const { return stop_ids_; }
  bool is_stop(int32_t id) const;
  const TokenTrie& trie() const { return trie_; }
  /// 32-bit words of a bitmask over the vocabulary (bit id % 32 of word id / 32).
  size_t bitmask_words() const { return (bytes_.size() + 31) / 32; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> stop_ids_;
  TokenTrie trie_;
};

}  // namespace izwi::structured
