#include "engine/text_stream.h"

#include <algorithm>

namespace izwi {

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop_strings)
    : detokenizer_(tokenizer, /*skip_special_tokens=*/true), stop_strings_(std::move(stop_strings)) {}

std::string TextStream::emit(size_t count) {
  std::string out = held_.substr(0, count);
  held_.erase(0, count);
  text_ += out;
  return out;
}

std::string TextStream::push(int32_t token) {
  if (stopped_) return {};
  try {
    held_ += detokenizer_.push(token);
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
