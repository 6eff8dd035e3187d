#include "structured/token_vocabulary.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace izwi::structured {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> stop_ids)
    : bytes_(std::move(token_bytes)), stop_ids_(std::move(stop_ids)) {
  for (const int32_t id : stop_ids_) {
    if (id < 0 || id >= size())
      fail(ErrorCode::InvalidArgument, "stop token id {} outside the vocabulary of {}", id, size());
    bytes_[static_cast<size_t>(id)].clear();  // a stop token is never text
  }
  trie_ = TokenTrie(bytes_);
}

TokenVocabulary TokenVocabulary::from_tokenizer(const Tokenizer& tokenizer,
                                                std::optional<std::vector<int32_t>> stop_ids) {
  std::vector<std::string> bytes(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!tokenizer.is_special(id)) bytes[static_cast<size_t>(id)] = tokenizer.token_bytes(id);
  }
  return TokenVocabulary(std::move(bytes), stop_ids ? std::move(*stop_ids) : tokenizer.eos_ids());
}

bool TokenVocabulary::is_stop(int32_t id) const {
  return std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end();
}

}  // namespace izwi::structured
