// Tekken specifics beyond the reference cases: id layout, special tokens, tokens that are only
// part of a UTF-8 character, the vocabulary cut, malformed files.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

constexpr int32_t kNumSpecial = 32;

const Tokenizer& tekken() {
  static const Tokenizer t = Tokenizer::from_dir(testing::tokenizer_fixture("tokenizer-tekken-small"));
  return t;
}

nlohmann::json tekken_json() {
  std::ifstream in(testing::tokenizer_fixture("tokenizer-tekken-small") + "/tekken.json");
  return nlohmann::json::parse(in);
}

TEST(TokenizerTekken, SpecialTokensComeFirstAndAreFoundByName) {
  const Tokenizer& t = tekken();
  EXPECT_EQ(t.token_to_id("[STREAMING_PAD]"), 23);
  EXPECT_EQ(t.token_to_id("[STREAMING_WORD]"), 24);
  EXPECT_EQ(t.token_to_id("<SPECIAL_31>"), 31);  // unlisted ids get mistral_common's filler names
  EXPECT_EQ(t.token_to_id("[NOT_A_TOKEN]"), std::nullopt);
  EXPECT_TRUE(t.is_special(23));
  EXPECT_FALSE(t.is_special(kNumSpecial + 'a'));
  EXPECT_EQ(t.token_bytes(23), "[STREAMING_PAD]");
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{2}));
  EXPECT_EQ(t.encode("hi", true).front(), 1);
  EXPECT_EQ(t.decode(t.encode("[INST]hi[/INST]"), true), "hi");
}

TEST(TokenizerTekken, RanksAreShiftedBySpecialCountAndCutAtDefaultVocabSize) {
  const Tokenizer& t = tekken();
  const nlohmann::json j = tekken_json();
  const int64_t kept = j["config"]["default_vocab_size"].get<int64_t>() - kNumSpecial;
  EXPECT_EQ(t.vocab_size(), kNumSpecial + kept);
  EXPECT_LT(kept, static_cast<int64_t>(j["vocab"].size()));
  EXPECT_EQ(t.token_to_id("a"), kNumSpecial + 'a');
  EXPECT_EQ(t.token_bytes(kNumSpecial + 'a'), "a");
  EXPECT_THROW(t.decode({static_cast<int32_t>(kNumSpecial + kept)}), Error);
}

TEST(TokenizerTekken, TokensThatArePartOfACharacter) {
  const Tokenizer& t = tekken();
  const int32_t c3 = kNumSpecial + 0xC3, a9 = kNumSpecial + 0xA9;  // "é" is C3 A9
  EXPECT_EQ(t.token_bytes(c3), "\xC3");
  EXPECT_EQ(t.decode({c3}), "\xEF\xBF\xBD");
  EXPECT_EQ(t.decode({c3, a9}), "\xC3\xA9");
  EXPECT_EQ(t.decode({c3, kNumSpecial + 'a'}),
            "\xEF\xBF\xBD"
            "a");
  IncrementalDetokenizer d(t);
  EXPECT_EQ(d.push(c3), "");
  EXPECT_EQ(d.push(a9), "\xC3\xA9");
  EXPECT_EQ(d.push(c3), "");
  EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");
}

TEST(TokenizerTekken, MalformedFilesNameTheField) {
  struct Case {
    std::string pointer;
    nlohmann::json value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/vocab/3/rank", 7, "vocab[3]: rank is not 3"},
      {"/vocab/3/token_bytes", "!!!", "vocab[3]: token_bytes is not base64"},
      {"/config/pattern", "(", "config.pattern"},
      {"/config/default_num_special_tokens", 3, "default_num_special_tokens (3) is below"},
      {"/special_tokens/2/rank", 9, "special_tokens[2]: rank is not 2"},
      {"/config/default_vocab_size", 100000, "default_vocab_size (100000) does not fit"},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    nlohmann::json j = tekken_json();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    dir.write("tekken.json", j.dump());
    const std::string message = testing::error_message([&] { Tokenizer::from_dir(dir.path()); });
    EXPECT_NE(message.find(dir.file("tekken.json")), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.pointer << ": " << message;
  }
  testing::TempDir no_config;
  nlohmann::json j = tekken_json();
  j.erase("config");
  no_config.write("tekken.json", j.dump());
  EXPECT_NE(testing::error_message([&] { Tokenizer::from_dir(no_config.path()); }).find("'config' is missing"),
            std::string::npos);
}

TEST(TokenizerTekken, TekkenJsonWinsOverTokenizerJson) {
  testing::TempDir dir;
  dir.write("tekken.json", tekken_json().dump());
  dir.write("tokenizer.json", "not even json");
  EXPECT_EQ(Tokenizer::from_dir(dir.path()).token_to_id("[STREAMING_PAD]"), 23);
}

}  // namespace
}  // namespace izwi
