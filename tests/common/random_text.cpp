#include "common/random_text.h"

#include <vector>

#include "tokenizer/utf8.h"

namespace izwi::testing {

std::string random_unicode_text(std::mt19937& rng, size_t max_code_points) {
  const auto pick = [&](char32_t lo, char32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  const size_t n = std::uniform_int_distribution<size_t>(0, max_code_points)(rng);
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<char32_t> cps;
    switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
      case 0:
      case 1:
        cps = {pick(0x20, 0x7E)};
        break;
      case 2:
        cps = {static_cast<char32_t>(" \n\t\r"[pick(0, 3)])};
        break;
      case 3:
        cps = {pick(0xC0, 0x17F), pick(0x300, 0x36F)};
        break;  // Latin + combining mark
      case 4:
        cps = {pick(0x1100, 0x1112), pick(0x1161, 0x1175)};
        break;  // Hangul L + V jamo
      case 5:
        cps = {pick(0x4E00, 0x9FFF)};
        break;  // CJK
      case 6:
        cps = {pick(0x400, 0x4FF), pick(0x600, 0x6FF)};
        break;  // Cyrillic, Arabic
      case 7:
        cps = {pick(0x1F466, 0x1F469), 0x1F3FD, 0x200D, pick(0x1F466, 0x1F469), 0xFE0F};
        break;  // emoji ZWJ
      case 8:
        cps = {pick(0x80, 0xD7FF)};
        break;
      default: {
        char32_t cp = pick(0xE000, 0x10FFFF);  // upper BMP and every supplementary plane
        cps = {cp};
      }
    }
    for (char32_t cp : cps) utf8::append(out, cp);
  }
  return out;
}

}  // namespace izwi::testing
