// Streaming detokenization: deltas are valid UTF-8, hold back incomplete characters and
// concatenate to the full decode.

#include <gtest/gtest.h>

#include <random>

#include "common/random_text.h"
#include "common/reference.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

void expect_stream_matches_decode(const Tokenizer& t, const std::vector<int32_t>& ids, bool skip_special) {
  IncrementalDetokenizer d(t, skip_special);
  std::string joined;
  for (int32_t id : ids) {
    const std::string delta = d.push(id);
    ASSERT_FALSE(utf8::first_invalid(delta).has_value()) << "delta is not valid UTF-8";
    joined += delta;
  }
  const std::string tail = d.finish();
  ASSERT_FALSE(utf8::first_invalid(tail).has_value());
  joined += tail;
  EXPECT_EQ(joined, t.decode(ids, skip_special));
}

class IncrementalDetokenizerProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(IncrementalDetokenizerProperty, DeltasConcatenateToTheFullDecode) {
  const Tokenizer t = Tokenizer::from_dir(testing::tokenizer_fixture(GetParam()));
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    const std::vector<int32_t> ids = t.encode(testing::random_unicode_text(rng, 30));
    expect_stream_matches_decode(t, ids, false);
  }
  // Arbitrary id sequences: byte tokens that never form valid UTF-8, specials in between.
  std::uniform_int_distribution<int32_t> any_id(0, t.vocab_size() - 1);
  for (int i = 0; i < 200; ++i) {
    std::vector<int32_t> ids(std::uniform_int_distribution<int>(0, 12)(rng));
    for (int32_t& id : ids) id = any_id(rng);
    expect_stream_matches_decode(t, ids, false);
    expect_stream_matches_decode(t, ids, true);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, IncrementalDetokenizerProperty,
                         ::testing::Values("tokenizer-qwen2-style", "tokenizer-tekken-small"),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

TEST(IncrementalDetokenizer, HoldsBackAnEmojiUntilItsLastByte) {
  testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json()));
  IncrementalDetokenizer d(t);
  // U+1F600 is F0 9F 98 80; ids 0..255 of the tiny tokenizer are the bytes themselves.
  EXPECT_EQ(d.push('a'), "a");
  EXPECT_EQ(d.push(0xF0), "");
  EXPECT_EQ(d.push(0x9F), "");
  EXPECT_EQ(d.push(0x98), "");
  EXPECT_EQ(d.push(0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(d.push(259), "hello");
  EXPECT_EQ(d.finish(), "");
}

TEST(IncrementalDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json()));
  IncrementalDetokenizer d(t);
  EXPECT_EQ(d.push(0xE4), "");
  EXPECT_EQ(d.push('x'),
            "\xEF\xBF\xBD"
            "x");                           // the lead byte was never completed
  EXPECT_EQ(d.push(0x80), "\xEF\xBF\xBD");  // a stray continuation byte is final at once
  EXPECT_EQ(d.push(0xF0), "");
  EXPECT_EQ(d.push(0x9F), "");
  EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");
  EXPECT_EQ(d.push('z'), "z");  // usable again after finish
}

TEST(IncrementalDetokenizer, SkipsSpecialTokensWhenAsked) {
  testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json()));
  IncrementalDetokenizer skip(t, true), keep(t, false);
  EXPECT_EQ(skip.push(301), "");
  EXPECT_EQ(keep.push(301), "<|eot_id|>");
  EXPECT_THROW(skip.push(9999), Error);
}

}  // namespace
}  // namespace izwi
