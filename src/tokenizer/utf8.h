#pragma once
// UTF-8 helpers: validation, lossy decoding (as Rust's String::from_utf8_lossy, which the
// Hugging Face decoders use), NFC normalisation, and where a byte stream may be cut.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace izwi::utf8 {

/// Byte offset of the first byte that does not start a valid UTF-8 sequence, or nullopt.
std::optional<size_t> first_invalid(std::string_view bytes);

/// Throws InvalidArgument naming `what` and the byte offset unless `bytes` is valid UTF-8.
void require_valid(std::string_view bytes, std::string_view what);

/// `bytes` with every maximal invalid subpart replaced by U+FFFD.
std::string lossy(std::string_view bytes);

/// Length of the longest prefix of `bytes` after which the rest is only the start of a
/// still-incomplete (but so far valid) sequence: the prefix can be emitted now.
size_t complete_prefix(std::string_view bytes);

/// Appends the UTF-8 encoding of code point `cp`.
void append(std::string& out, char32_t cp);

/// Canonical composition (NFC) of valid UTF-8 text.
std::string nfc(std::string_view text);

enum class Form { NFC, NFD, NFKC, NFKD };
/// The Unicode normalisation form `form` of valid UTF-8 text.
std::string normalize(std::string_view text, Form form);

/// Lower case as Rust's char::to_lowercase maps each character (context-free, U+0130 -> "i\u0307").
std::string lowercase(std::string_view text);

/// The code point starting at text[pos] (valid UTF-8) and its length in bytes.
char32_t decode_at(std::string_view text, size_t pos, size_t* length);

/// Length in bytes of the UTF-8 sequence led by `lead` (1 for a continuation byte).
inline size_t sequence_length(uint8_t lead) { return lead < 0xE0 ? (lead < 0xC0 ? 1 : 2) : (lead < 0xF0 ? 3 : 4); }

/// Unicode properties as Rust's char methods define them.
bool is_whitespace(char32_t cp);   ///< char::is_whitespace (White_Space)
bool is_numeric(char32_t cp);      ///< char::is_numeric (Nd, Nl, No)
bool is_punctuation(char32_t cp);  ///< ASCII punctuation or a P* category (the Punctuation pre-tokenizer)

}  // namespace izwi::utf8
