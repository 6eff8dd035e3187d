#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <cctype>

namespace izwi {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Any non-ASCII byte counts as part of a word, which is right for letters in every script.
bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u) || c == '_';
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    if (!tokens_[i].content.empty()) by_first_byte_[static_cast<uint8_t>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  }
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  size_t text_start = 0, pos = 0;
  while (pos < text.size()) {
    const AddedToken* found = nullptr;
    for (uint32_t index : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
      const AddedToken& t = tokens_[index];
      if (text.compare(pos, t.content.size(), t.content) != 0) continue;
      const size_t end = pos + t.content.size();
      if (t.single_word &&
          ((pos > 0 && is_word_byte(text[pos - 1])) || (end < text.size() && is_word_byte(text[end])))) {
        continue;
      }
      found = &t;
      break;
    }
    if (found == nullptr) {
      ++pos;
      continue;
    }
    size_t start = pos, end = pos + found->content.size();
    if (found->lstrip) {
      while (start > text_start && is_space(text[start - 1])) --start;
    }
    if (found->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (start > text_start) out.push_back({text.substr(text_start, start - text_start), -1});
    out.push_back({text.substr(start, end - start), found->id});
    text_start = pos = end;
  }
  if (text_start < text.size()) out.push_back({text.substr(text_start), -1});
}

}  // namespace izwi
