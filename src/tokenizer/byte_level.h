#pragma once
// GPT-2's byte-level alphabet: every byte is shown as a printable code point, so BPE vocabularies
// store byte strings as text ("Ġthe" is " the").

#include <string>
#include <string_view>

namespace izwi::byte_level {

/// The vocabulary form of raw bytes ("\x20the" -> "Ġthe").
std::string encode(std::string_view bytes);

/// The raw bytes of a vocabulary token, as the ByteLevel decoder does it: if any code point is
/// outside the alphabet the token stands for its own UTF-8 bytes.
std::string decode(std::string_view token);

}  // namespace izwi::byte_level
