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
  virtual std::string normalize(std::string_view text) const = 0;
  /// Appends the ids of normalised text that holds no added token.
  virtual void encode(std::string_view normalized, std::vector<int32_t>& ids) const = 0;
};

}  // namespace izwi
