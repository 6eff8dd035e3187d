#pragma once
// Added (and special) tokens are found in the text before any BPE: leftmost match first, the
// longest one where several start at the same byte, honouring single_word / lstrip / rstrip.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace izwi {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool single_word = false;  ///< only when not inside a word
  bool lstrip = false;       ///< swallows whitespace on its left
  bool rstrip = false;       ///< swallows whitespace on its right
  bool normalized = false;   ///< matched in the normalised text rather than the raw text
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  /// A piece of text: plain text (id < 0) or one added token.
  struct Segment {
    std::string_view text;
    int32_t id;
  };
  /// Cuts `text` into plain text and added tokens, in order; empty plain pieces are left out.
  void split(std::string_view text, std::vector<Segment>& out) const;
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<AddedToken> tokens_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  ///< indices, longest content first
};

}  // namespace izwi
