#pragma once
// What a tokenizer format does with ordinary text (text between added/special tokens).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace izwi {

class TextModel {
 public:
  virtual ~TextModel() = default;
  /// The normalised form of `text` (valid UTF-8); added tokens marked "normalized" match in it.
  /// `*kept_start` becomes false if normalisation removed the first characters.
  virtual std::string normalize(std::string_view text, bool* kept_start) const = 0;
  /// Appends the ids of normalised text that holds no added token; `at_origin`: the text starts
  /// at offset 0 of the whole input (Metaspace's prepend_scheme "first" looks at it).
  virtual void encode(std::string_view normalized, std::vector<int32_t>& ids, bool at_origin) const = 0;
};

}  // namespace izwi
