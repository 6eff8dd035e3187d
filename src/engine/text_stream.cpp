#include "engine/text_stream.h"

#include <algorithm>

namespace izwi {

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop_strings,
                       std::vector<int32_t> shown_special_ids)
    : tokenizer_(tokenizer),
      detokenizer_(tokenizer, /*skip_special_tokens=*/shown_special_ids.empty()),
      shown_special_ids_(std::move(shown_special_ids)),
      stop_strings_(std::move(stop_strings)) {}

std::string TextStream::emit(size_t count) {
  std::string out = held_.substr(0, count);
  held_.erase(0, count);
  text_ += out;
  return out;
}

std::string TextStream::push(int32_t token) {
  if (stopped_) return {};
  try {
    const bool shown =
        shown_special_ids_.empty() || !tokenizer_.is_special(token) ||
        std::find(shown_special_ids_.begin(), shown_special_ids_.end(), token) != shown_special_ids_.end();
    if (shown) held_ += detokenizer_.push(token);
  } catch (const Error& e) {
    // Models pad their embedding rows past the tokenizer's vocabulary: such ids carry no text.
    if (e.code() != ErrorCode::InvalidArgument) throw;
  }

  size_t first_match = std::string::npos;
  for (const std::string& stop : stop_strings_) first_match = std::min(first_match, held_.find(stop));
  if (first_match != std::string::npos) {
    stopped_ = true;
    std::string out = emit(first_match);
    held_.clear();
    return out;
  }
  // Keep the longest tail of held_ that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const std::string& stop : stop_strings_) {
    for (size_t n = std::min(held_.size(), stop.size() - 1); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  return emit(held_.size() - keep);
}

std::string TextStream::finish() {
  if (stopped_) return {};
  held_ += detokenizer_.finish();
  return emit(held_.size());
}

}  // namespace izwi
