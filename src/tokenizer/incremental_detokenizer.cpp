#include "izwi/tokenizer.h"
#include "tokenizer/utf8.h"

namespace izwi {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

std::string IncrementalDetokenizer::push(int32_t id) {
  const std::string bytes = tokenizer_.token_bytes(id);  // validates the id even when skipped
  if (skip_special_tokens_ && tokenizer_.is_special(id)) return "";
  pending_ += bytes;
  // Cutting before an incomplete sequence keeps lossy decoding of the parts equal to that of
  // the whole: a maximal invalid subpart never extends past a lead byte.
  const size_t ready = utf8::complete_prefix(pending_);
  std::string text = utf8::lossy(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return text;
}

std::string IncrementalDetokenizer::finish() {
  std::string text = utf8::lossy(pending_);
  pending_.clear();
  return text;
}

}  // namespace izwi
