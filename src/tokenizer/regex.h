#pragma once
// A compiled PCRE2 pattern (UTF + Unicode properties, JIT) used to split text into pre-tokens.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace izwi {

class JsonFields;

class Regex {
 public:
  /// Compiles `pattern` (a literal string if `literal`); InvalidFormat naming `origin` on error.
  Regex(const std::string& pattern, bool literal, const std::string& origin);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Every non-empty piece of `text` in order: the matches and the gaps between them.
  /// `text` must be valid UTF-8. Thread-safe.
  void split_isolated(std::string_view text, std::vector<std::string_view>& pieces) const;

  /// Byte ranges [start, end) of the matches (empty ones included, as Rust's find_iter gives them) in `text`, left to
  /// right. Thread-safe.
  void find_matches(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const;

 private:
  template <typename OnMatch>
  void for_each_match(std::string_view text, OnMatch&& on_match) const;
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

/// The `pattern` of a tokenizer.json step (Split, Replace): {"String": literal} or {"Regex": pattern}.
std::shared_ptr<Regex> pattern_regex(const JsonFields& step);

/// `text` with every match of `regex` replaced by `content`.
std::string replace_all(const Regex& regex, const std::string& text, const std::string& content);

}  // namespace izwi
