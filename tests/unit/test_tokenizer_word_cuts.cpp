// SentencePiece-style tokenizer.json files give BPE whole texts; the loader cuts long texts before
// word-start U+2581 only when no merge can join across that cut. Here one vocabulary has a merge
// that does ("a" + "\u2581b"): the ids must be those of merging the text as one piece.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

const std::string kMeta = "\xE2\x96\x81";

nlohmann::json sentencepiece_style(bool cross_merge) {
  // U+2581 is written "\u2581" in the JSON text.
  nlohmann::json doc = nlohmann::json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
    "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    "pre_tokenizer": null, "post_processor": null,
    "decoder": {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    "model": {"type": "BPE", "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "\u2581": 1, "a": 2, "b": 3, "\u2581b": 4, "a\u2581b": 5},
              "merges": [["\u2581", "b"]]}
  })");
  if (cross_merge) doc["model"]["merges"].push_back({"a", kMeta + "b"});
  return doc;
}

std::string repeated(const std::string& unit, int times, const std::string& separator) {
  std::string out;
  for (int i = 0; i < times; ++i) out += (i ? separator : "") + unit;
  return out;
}

TEST(TokenizerWordCuts, AMergeAcrossTheWordStartKeepsTheTextWhole) {
  testing::TempDir dir;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, sentencepiece_style(true)));
  const std::string text = repeated("a b", 40, " ");  // 159 bytes: longer than any cached piece
  std::vector<int32_t> expected;
  for (int i = 0; i < 40; ++i) {
    if (i) expected.push_back(1);  // the space between the units stays alone
    expected.push_back(5);         // "a" + "\u2581b" merged across the word start
  }
  EXPECT_EQ(tokenizer.encode(text), expected);
  EXPECT_EQ(tokenizer.decode(expected), text);
}

TEST(TokenizerWordCuts, WithoutSuchAMergeTheCutGivesTheSameIds) {
  testing::TempDir dir;
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, sentencepiece_style(false)));
  const std::string text = repeated("a b", 40, " ");
  std::vector<int32_t> expected;
  for (int i = 0; i < 40; ++i) {
    if (i) expected.insert(expected.end(), {1});
    expected.insert(expected.end(), {2, 4});
  }
  EXPECT_EQ(tokenizer.encode(text), expected);
  EXPECT_EQ(tokenizer.encode(text.substr(0, 3)), (std::vector<int32_t>{2, 4}));  // short: no cut at all
}

}  // namespace
}  // namespace izwi
