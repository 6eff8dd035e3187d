#pragma once
// A deterministic byte-level vocabulary of any size for constrained-decoding tests and benchmarks,
// shaped like a real BPE vocabulary (the repository's tokenizer fixtures are small): all 256
// bytes (so every text is reachable), JSON punctuation runs, numbers, escapes, partial and whole
// UTF-8 characters, then words with the spaces, capitals, quotes and punctuation real vocabularies
// glue to them. The last id is the stop token (no bytes).

#include <cstdint>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace izwi::testing {

inline std::vector<std::string> synthetic_vocabulary(size_t size, uint32_t seed = 7) {
  std::vector<std::string> tokens;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& t) {
    if (tokens.size() + 1 < size && !t.empty() && seen.insert(t).second) tokens.push_back(t);
  };
  for (int b = 0; b < 256; ++b) add(std::string(1, static_cast<char>(b)));
  const std::string punctuation = "{}[]\":, \n";
  for (const char a : punctuation) {
    for (const char b : punctuation) {
      add(std::string{a, b});
      for (const char c : punctuation) add(std::string{a, b, c});
    }
  }
  for (const char* t :
       {"true",     "false", "null",  "rue",     "alse",   "ull",    " true", " false", " null", "\\n",   "\\\"",
        "\\\\",     "\\u",   "\\u00", "\\ud83d", "\\t",    "é",      "ü",     "你好",   "世界",  "😀",     "\xe4\xbd",
        "\xf0\x9f", "  ",    "    ",  "\n  ",    "\n    ", "\": \"", "\": ",  "\",\n",  "},\n",  "\"\n}", "-0",
        ".0",       "e+",    "E-",    "1e",      "@",      ".com",   "-01-",  "T12",    ":00",   "Z\""}) {
    add(t);
  }
  for (int n = 0; n < 1000; ++n) {
    add(std::to_string(n));
    if (n < 100) add("-" + std::to_string(n)), add("." + std::to_string(n)), add(" " + std::to_string(n));
  }
  const std::vector<std::string> syllables = {
      "a",  "e",  "i",  "o",  "u",  "th", "er", "an", "re", "on", "at", "en", "nd", "ti", "es", "or", "te", "of",
      "ed", "is", "it", "al", "ar", "st", "to", "nt", "ng", "se", "ha", "as", "ou", "io", "le", "ve", "co", "me",
      "de", "hi", "ri", "ro", "ic", "ne", "ea", "ra", "ce", "li", "ch", "ll", "be", "ma", "si", "om", "ur", "ca",
      "el", "ta", "la", "ns", "di", "fo", "ho", "pe", "ec", "pr", "no", "ct", "us", "ac", "ot", "il", "tr", "ly"};
  const std::vector<std::string> decorations = {"", " ", "\"", " \"", "\":", "\",", "_", ".", "(", ")", "\":\"", "\"}"};
  std::mt19937 rng(seed);
  while (tokens.size() + 1 < size) {
    std::string word;
    const int parts = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int i = 0; i < parts; ++i)
      word += syllables[std::uniform_int_distribution<size_t>(0, syllables.size() - 1)(rng)];
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
    const size_t d = std::uniform_int_distribution<size_t>(0, decorations.size() - 1)(rng);
    const int side = std::uniform_int_distribution<int>(0, 2)(rng);
    add(side == 0 ? decorations[d] + word : side == 1 ? word + decorations[d] : " " + word);
  }
  tokens.emplace_back();  // the stop token
  return tokens;
}

}  // namespace izwi::testing
