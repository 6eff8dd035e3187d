// Hostile inputs found by review: JSON nested tens of thousands of levels deep in any file the
// tokenizer reads (once a stack overflow), and text that drives a Split regex into catastrophic
// backtracking (once reported as Internal).

#include <gtest/gtest.h>

#include "common/error_message.h"
#include "common/json_fields.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;
using testing::tiny_tokenizer_json;
using testing::write_tokenizer_dir;
using testing::write_vocab_merges_dir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// {"a": [[[...]]]} with `depth` levels in all.
std::string nested_json(int depth) {
  return "{\"a\": " + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
}

void expect_rejected_deep(const std::string& dir, const std::string& file, int depth) {
  SCOPED_TRACE(file + " nested " + std::to_string(depth) + " deep");
  EXPECT_EQ(error_code_of([&] { Tokenizer::from_dir(dir); }), ErrorCode::InvalidFormat);
  const std::string message = error_message([&] { Tokenizer::from_dir(dir); });
  EXPECT_TRUE(contains(message, file)) << message;
  EXPECT_TRUE(contains(message, "exceeds " + std::to_string(kMaxJsonDepth) + " levels")) << message;
}

TEST(TokenizerHostileInput, DeeplyNestedJsonIsInvalidFormatInEveryFile) {
  constexpr int kDepth = 50000;
  const std::string deep = nested_json(kDepth);
  {
    TempDir dir;
    dir.write("tokenizer.json", deep);
    expect_rejected_deep(dir.path(), "tokenizer.json", kDepth);
  }
  {
    TempDir dir;
    dir.write("tekken.json", deep);
    expect_rejected_deep(dir.path(), "tekken.json", kDepth);
  }
  {
    // The deep value where the loader used to dump it into an error message (recursively).
    TempDir dir;
    nlohmann::json j = tiny_tokenizer_json();
    j.erase("decoder");
    const std::string text = j.dump();
    dir.write("tokenizer.json", text.substr(0, text.size() - 1) + ",\"decoder\":" + deep + "}");
    expect_rejected_deep(dir.path(), "tokenizer.json", kDepth + 1);
  }
  {
    TempDir dir;
    write_tokenizer_dir(dir, tiny_tokenizer_json());
    dir.write("tokenizer_config.json", deep);
    expect_rejected_deep(dir.path(), "tokenizer_config.json", kDepth);
  }
  {
    TempDir dir;
    write_tokenizer_dir(dir, tiny_tokenizer_json());
    dir.write("generation_config.json", deep);
    expect_rejected_deep(dir.path(), "generation_config.json", kDepth);
  }
  {
    TempDir dir;
    write_vocab_merges_dir(dir, tiny_tokenizer_json());
    dir.write("vocab.json", deep);
    expect_rejected_deep(dir.path(), "vocab.json", kDepth);
  }
  {
    TempDir dir;
    write_vocab_merges_dir(dir, tiny_tokenizer_json());
    dir.write("tokenizer_config.json", deep);
    expect_rejected_deep(dir.path(), "tokenizer_config.json", kDepth);
  }
}

TEST(TokenizerHostileInput, NestingUpTo512LevelsIsAccepted) {
  TempDir ok, deep;
  // Brackets inside strings (escaped quotes included) do not count.
  nlohmann::json config = nlohmann::json::parse(nested_json(512));
  config["eos_token"] = "<|eot_id|>";
  config["note"] = std::string(600, '[') + "\"\\";
  const Tokenizer t = Tokenizer::from_dir(write_tokenizer_dir(ok, tiny_tokenizer_json(), config));
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{301}));
  write_tokenizer_dir(deep, tiny_tokenizer_json(), nlohmann::json::parse(nested_json(513)));
  expect_rejected_deep(deep.path(), "tokenizer_config.json", 513);
}

TEST(TokenizerHostileInput, CatastrophicRegexIsInvalidArgumentNamingThePattern) {
  TempDir dir;
  nlohmann::json j = tiny_tokenizer_json();
  const std::string pattern = "(a|a)+\\z";  // exponential backtracking on a run of a's that does not end the text
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  const Tokenizer t = Tokenizer::from_dir(write_tokenizer_dir(dir, j));
  EXPECT_EQ(t.encode("aaaa"), (std::vector<int32_t>{'a', 'a', 'a', 'a'}));
  const std::string text = std::string(64, 'a') + "!";
  EXPECT_EQ(error_code_of([&] { t.encode(text); }), ErrorCode::InvalidArgument);
  const std::string message = error_message([&] { t.encode(text); });
  EXPECT_TRUE(contains(message, pattern)) << message;
  EXPECT_TRUE(contains(message, "too complex")) << message;
}

}  // namespace
}  // namespace izwi
