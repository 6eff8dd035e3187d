#pragma once
// Grammar fragments of JSON's lexical pieces: one character of string content (UTF-8 checked,
// escapes without lone surrogates), bounded whitespace, numbers.

#include <cstddef>

#include "structured/grammar_builder.h"

namespace izwi::structured {

/// Edges from `from` to `to` over one character of JSON string content: an unescaped code point
/// (well-formed UTF-8) or an escape (\uXXXX outside the surrogates: a lone one is not text).
/// All leave `from` itself, so a parse inside a string is one thread.
void add_string_char_edges(GrammarBuilder& builder, int32_t from, int32_t to);
/// One character of JSON string content, as a fragment.
Fragment json_string_char(GrammarBuilder& builder);
/// Whitespace between tokens: 0 to `max_bytes` of space, tab, newline, carriage return.
Fragment json_whitespace(GrammarBuilder& builder, size_t max_bytes);
/// Digits before a number's point or exponent. With the exponent's 2 digits this keeps every
/// generated number a finite double (parsers reject 1e400) and integers near int64.
constexpr size_t kMaxIntegerDigits = 19;

/// Any JSON number: -?(0|[1-9][0-9]{0,18})(.[0-9]+)?([eE][+-]?[0-9]{1,2})?.
Fragment json_number(GrammarBuilder& builder);
/// Any JSON integer: -?(0|[1-9][0-9]{0,18}).
Fragment json_integer(GrammarBuilder& builder);

}  // namespace izwi::structured
