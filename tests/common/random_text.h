#pragma once
// Seeded random Unicode text for property tests: ASCII, Latin with combining marks, Hangul jamo
// (which NFC composes), CJK, Cyrillic/Arabic, emoji with skin tones and ZWJ sequences, and code
// points drawn from all planes (surrogates excluded).

#include <random>
#include <string>

namespace izwi::testing {

std::string random_unicode_text(std::mt19937& rng, size_t max_code_points);

}  // namespace izwi::testing
