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

}  // namespace izwi::utf8
