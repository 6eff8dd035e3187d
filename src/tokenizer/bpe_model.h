#pragma once
// tokenizer.json "model" of type BPE over the byte-level alphabet. Works on raw bytes: the
// vocabulary is converted out of the byte-level alphabet once at load.

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_merge.h"
#include "tokenizer/token_cache.h"

namespace izwi {

class BpeModel {
 public:
  /// Parses the "model" value; InvalidFormat / Unsupported naming `origin` and the field.
  static BpeModel from_json(const nlohmann::json& model, const std::string& origin);

  /// Appends the ids of one pre-token (raw bytes).
  void encode_piece(std::string_view piece, std::vector<int32_t>& ids) const;

  /// Vocabulary as stored in the file (byte-level form) -> id.
  const std::unordered_map<std::string, int32_t>& vocab() const { return vocab_; }

 private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<std::string, int32_t> bytes_to_id_;  ///< raw bytes -> id, for ignore_merges
  std::array<int32_t, 256> byte_ids_{};
  std::unordered_map<uint64_t, bpe::Merge> merges_;  ///< (left id << 32 | right id) -> merge
  bool ignore_merges_ = false;
  std::unique_ptr<TokenCache> cache_ = std::make_unique<TokenCache>();
};

}  // namespace izwi
