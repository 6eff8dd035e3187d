#include "izwi/tokenizer.h"
#include "tokenizer/utf8.h"

namespace izwi {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer),
      skip_special_tokens_(skip_special_tokens),
      strip_spaces_(tokenizer.leading_spaces_stripped()) {}

void IncrementalDetokenizer::strip_leading(std::string& text) {
  size_t n = 0;
  while (strip_spaces_ > 0 && n < text.size() && text[n] == ' ') {
    ++n;
    --strip_spaces_;
  }
  if (n < text.size()) strip_spaces_ = 0;  // the text has begun: nothing more is stripped
  text.erase(0, n);
}

std::string IncrementalDetokenizer::push(int32_t id) {
  const std::string bytes = tokenizer_.token_bytes(id);  // validates the id even when skipped
  if (skip_special_tokens_ && tokenizer_.is_special(id)) return "";
  pending_ += first_ ? tokenizer_.first_token_bytes(id) : bytes;
  first_ = false;
  // Cutting before an incomplete sequence keeps lossy decoding of the parts equal to that of
  // the whole: a maximal invalid subpart never extends past a lead byte.
  const size_t ready = utf8::complete_prefix(pending_);
  std::string text = utf8::lossy(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  strip_leading(text);
  return text;
}

std::string IncrementalDetokenizer::finish() {
  std::string text = utf8::lossy(pending_);
  pending_.clear();
  strip_leading(text);
  return text;
}

}  // namespace izwi
