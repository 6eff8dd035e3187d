#include "tokenizer/byte_level.h"

#include <array>
#include <unordered_map>

#include "tokenizer/utf8.h"

namespace izwi::byte_level {
namespace {

struct Alphabet {
  std::array<std::string, 256> byte_to_text;
  std::array<int16_t, 0x200> code_point_to_byte;  ///< -1: not in the alphabet (which lies below U+0200)

  Alphabet() {
    // Printable Latin-1 bytes keep their code point; the others are moved to U+0100 upwards.
    code_point_to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : next++;
      utf8::append(byte_to_text[b], cp);
      code_point_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

std::string encode(std::string_view bytes) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += a.byte_to_text[static_cast<uint8_t>(c)];
  return out;
}

std::string decode(std::string_view token) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(token.size());
  size_t pos = 0;
  while (pos < token.size()) {
    const uint8_t lead = static_cast<uint8_t>(token[pos]);
    const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : 3;
    // The alphabet lies below U+0800: a longer sequence is outside it.
    if (len > 2 || pos + len > token.size()) return std::string(token);
    char32_t cp = len == 1 ? lead : (lead & 0x1F);
    for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<uint8_t>(token[pos + i]) & 0x3F);
    if (cp >= a.code_point_to_byte.size() || a.code_point_to_byte[cp] < 0) return std::string(token);
    out += static_cast<char>(a.code_point_to_byte[cp]);
    pos += len;
  }
  return out;
}

}  // namespace izwi::byte_level
