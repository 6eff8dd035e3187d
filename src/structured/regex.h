#pragma once
// A regular subset of JSON Schema's `pattern` (ECMAScript syntax), compiled to grammar fragments:
// literal characters, escapes (\d \w \s \D \W \S, escaped punctuation, \t \n \r), classes [a-z]
// and [^...], the dot, groups (and (?:...)), alternation, quantifiers * + ? {m} {m,} {m,n} (a lazy
// `?` after one is accepted: it does not change what matches), ^ at the start and $ at the end.
// Generated text is a subset of what the pattern matches: the dot and negated sets produce
// printable ASCII only, and control characters only as \t \n \r escapes.

#include <string>
#include <string_view>

#include "structured/grammar_builder.h"

namespace izwi::structured {

enum class RegexTarget {
  JsonStringContent,  ///< the characters between a string's quotes, JSON-escaped; search semantics
                      ///< (unanchored ends match any characters, as JSON Schema's `pattern` does)
  RawBytes,           ///< the bytes themselves, matched whole (for number ranges and formats)
};

/// Throws InvalidArgument (malformed pattern) or Unsupported (valid but outside the subset), the
/// message naming `field` (e.g. "/properties/zip/pattern") and the offset.
Fragment compile_regex(GrammarBuilder& builder, std::string_view pattern, RegexTarget target, const std::string& field);

}  // namespace izwi::structured
