// Properties over many seeded random strings: decode(encode(s)) == NFC(s); encode rejects
// invalid UTF-8 with the byte offset; NFC itself on known cases.

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "common/error_message.h"
#include "common/random_text.h"
#include "common/reference.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

class TokenizerProperties : public ::testing::TestWithParam<std::string> {
 protected:
  Tokenizer tokenizer() const { return Tokenizer::from_dir(testing::tokenizer_fixture(GetParam())); }
};

TEST_P(TokenizerProperties, DecodeOfEncodeIsTheNfcText) {
  const Tokenizer t = tokenizer();
  std::mt19937 rng(20261123);
  const bool normalizes = GetParam() != "tokenizer-tekken-small";  // Tekken has no normaliser
  for (int i = 0; i < 400; ++i) {
    const std::string text = testing::random_unicode_text(rng, 40);
    const std::vector<int32_t> ids = t.encode(text);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t.vocab_size());
    ASSERT_EQ(t.decode(ids), normalizes ? utf8::nfc(text) : text) << "case " << i;
  }
}

TEST_P(TokenizerProperties, InvalidUtf8IsRejectedWithTheByteOffset) {
  const Tokenizer t = tokenizer();
  const std::vector<std::pair<std::string, size_t>> cases = {
      {"ab\x80", 2},                // stray continuation byte
      {"abc\xC3", 3},               // truncated at the end
      {"x\xC0\xAF", 1},             // overlong encoding
      {"\xED\xA0\x80", 0},          // UTF-16 surrogate
      {"ok \xF4\x90\x80\x80", 3},   // above U+10FFFF
      {"\xE4\xBD\xA0\xE4\xBD", 3},  // 你 then a truncated character
      {"\xFF", 0},
  };
  for (const auto& [text, offset] : cases) {
    try {
      t.encode(text);
      ADD_FAILURE() << "accepted invalid UTF-8 at offset " << offset;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("at byte offset " + std::to_string(offset)), std::string::npos) << e.what();
    }
  }
}

TEST_P(TokenizerProperties, ConcurrentEncodesMatchSequentialOnes) {
  // Threads share the pre-token cache; results must not depend on who filled it.
  const Tokenizer t = tokenizer();
  std::mt19937 rng(99);
  std::vector<std::string> texts(64);
  for (std::string& text : texts) text = testing::random_unicode_text(rng, 60) + " the cache the cache";
  const Tokenizer separate = tokenizer();  // its own cache
  std::vector<std::vector<int32_t>> expected;
  for (const std::string& text : texts) expected.push_back(separate.encode(text));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          const size_t k = (i * 7 + w + round) % texts.size();
          if (t.encode(texts[k]) != expected[k]) ++mismatches;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerProperties,
                         ::testing::Values("tokenizer-qwen2-style", "tokenizer-llama3-style", "tokenizer-tekken-small"),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

TEST(Utf8, NfcComposesKnownCases) {
  EXPECT_EQ(utf8::nfc("e\xCC\x81"), "\xC3\xA9");                     // e + U+0301 -> é
  EXPECT_EQ(utf8::nfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");  // Hangul jamo -> 가
  EXPECT_EQ(utf8::nfc("\xE2\x84\xAB"), "\xC3\x85");                  // Angstrom sign -> Å
  EXPECT_EQ(utf8::nfc("plain ascii"), "plain ascii");
}

TEST(Utf8, LossyReplacesEachMaximalInvalidSubpart) {
  EXPECT_EQ(utf8::lossy("a\xF0\x9F\x98"
                        "b"),
            "a\xEF\xBF\xBD"
            "b");  // one U+FFFD for the truncated emoji
  EXPECT_EQ(utf8::lossy("\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::lossy("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // E0 80 is no valid prefix
}

}  // namespace
}  // namespace izwi
