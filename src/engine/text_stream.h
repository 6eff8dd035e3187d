#pragma once
// One request's generated text on the worker thread: tokens are detokenized incrementally and
// checked against the request's stop strings. Text that could be the start of a stop string is
// held back until the next tokens show it is not, so no emitted text ever has to be retracted.

#include <cstdint>
#include <string>
#include <vector>

#include "izwi/tokenizer.h"

namespace izwi {

class TextStream {
 public:
  /// Special tokens are left out of the text, except `shown_special_ids` (e.g. the markers a
  /// tool-call format opens calls with, where a tokenizer makes them special).
  TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop_strings,
             std::vector<int32_t> shown_special_ids = {});

  /// Appends one generated token. Returns the text that became final; sets stopped() when a stop
  /// string appeared (the stop string and anything after it are dropped).
  std::string push(int32_t token);
  /// The end of generation: returns whatever was held back (nothing once stopped).
  std::string finish();

  bool stopped() const { return stopped_; }
  /// Everything emitted so far.
  const std::string& text() const { return text_; }

 private:
  std::string emit(size_t count);

  Tokenizer tokenizer_;
  IncrementalDetokenizer detokenizer_;
  std::vector<int32_t> shown_special_ids_;
  std::vector<std::string> stop_strings_;
  std::string held_;  ///< Decoded, not yet emitted: may be the start of a stop string.
  std::string text_;
  bool stopped_ = false;
};

}  // namespace izwi
