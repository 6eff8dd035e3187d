#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding): tekken.json's token bytes, and the audio the
// server sends and receives inside JSON.

#include <optional>
#include <string>
#include <string_view>

namespace izwi {

std::string base64_encode(std::string_view bytes);
/// std::nullopt for a character outside the alphabet or bad padding.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace izwi
