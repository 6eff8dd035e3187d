// Qwen2 / GPT-2 style folders without tokenizer.json (vocab.json + merges.txt +
// tokenizer_config.json): the same ids and text as the tokenizer.json they convert to, and every
// malformed file named with its line.

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_message.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

using testing::error_message;
using testing::TempDir;
using testing::tiny_tokenizer_json;
using testing::tokenizer_fixture;
using testing::write_tokenizer_dir;
using testing::write_vocab_merges_dir;

nlohmann::json read_fixture_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

ErrorCode error_code(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no izwi::Error thrown";
  return ErrorCode::Internal;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TokenizerVocabMerges, Qwen2FolderMatchesEveryReferenceCase) {
  const std::string fixture = tokenizer_fixture("tokenizer-qwen2-style");
  const nlohmann::json tokenizer_json = read_fixture_json(fixture + "/tokenizer.json");
  TempDir dir;
  const Tokenizer t = Tokenizer::from_dir(write_vocab_merges_dir(
      dir, tokenizer_json, "Qwen2Tokenizer", {{"bos_token", nullptr}, {"eos_token", "<|im_end|>"}}));
  const Tokenizer reference_tokenizer = Tokenizer::from_dir(fixture);

  const nlohmann::json reference = read_fixture_json(fixture + "/reference.json");
  ASSERT_GE(reference.at("cases").size(), 17u);
  for (const auto& c : reference.at("cases")) {
    const std::string text = c.at("text");
    const auto expected = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(t.encode(text), expected) << "text: " << text;
    EXPECT_EQ(t.decode(expected), c.at("decoded").get<std::string>()) << "text: " << text;
    EXPECT_EQ(t.decode(expected, true), reference_tokenizer.decode(expected, true)) << "text: " << text;
  }
  EXPECT_EQ(t.vocab_size(), reference_tokenizer.vocab_size());
  for (const auto& token : tokenizer_json.at("added_tokens")) {
    const int32_t id = token.at("id");
    EXPECT_EQ(t.token_to_id(token.at("content").get<std::string>()), id);
    EXPECT_EQ(t.is_special(id), token.at("special").get<bool>());
  }
  EXPECT_FALSE(t.bos_id().has_value());
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{*t.token_to_id("<|im_end|>")}));
  EXPECT_EQ(t.encode("Hi", /*add_special_tokens=*/true), t.encode("Hi"));  // the ByteLevel post-processor adds none
}

TEST(TokenizerVocabMerges, Qwen2DefaultsAndNfc) {
  TempDir dir;
  nlohmann::json j = tiny_tokenizer_json();
  j["added_tokens"].push_back({{"id", 304},
                               {"content", "<|endoftext|>"},
                               {"special", true},
                               {"normalized", false},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"single_word", false}});
  const Tokenizer t = Tokenizer::from_dir(write_vocab_merges_dir(dir, j, "Qwen2Tokenizer"));
  // Qwen2Tokenizer's default eos_token is <|endoftext|>; it has no default BOS.
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{304}));
  EXPECT_FALSE(t.bos_id().has_value());
  // NFC: e + U+0301 becomes U+00E9.
  EXPECT_EQ(t.decode(t.encode("e\xCC\x81")), "\xC3\xA9");
  // The Qwen2 regex splits digits one by one.
  EXPECT_EQ(t.encode("123"), (std::vector<int32_t>{'1', '2', '3'}));
  EXPECT_EQ(t.encode("hello<|endoftext|>"), (std::vector<int32_t>{259, 304}));
}

TEST(TokenizerVocabMerges, Gpt2FolderUsesTheGpt2RegexWithoutNfc) {
  TempDir a, b;
  nlohmann::json j = tiny_tokenizer_json();
  // A GPT-2 vocabulary: <|endoftext|> is a vocabulary entry, named by the config only.
  j["model"]["vocab"]["<|endoftext|>"] = 261;
  const Tokenizer t = Tokenizer::from_dir(write_vocab_merges_dir(a, j, "GPT2Tokenizer", {{"add_bos_token", true}}));
  // What GPT2TokenizerFast's conversion gives as tokenizer.json.
  nlohmann::json converted = j;
  converted["normalizer"] = nullptr;
  converted["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  converted["added_tokens"].push_back({{"id", 261}, {"content", "<|endoftext|>"}, {"special", true}});
  const Tokenizer reference = Tokenizer::from_dir(write_tokenizer_dir(b, converted));

  for (const std::string text : {"hello world 123 4567", "e\xCC\x81 hello's  \n\n x", "a<|endoftext|>hello <mask>"}) {
    EXPECT_EQ(t.encode(text), reference.encode(text)) << text;
  }
  EXPECT_EQ(t.decode(t.encode("e\xCC\x81")), "e\xCC\x81");  // no NFC
  EXPECT_TRUE(t.is_special(261));
  // GPT2Tokenizer's defaults: <|endoftext|> is BOS and EOS; add_bos_token puts it first.
  EXPECT_EQ(t.bos_id(), 261);
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{261}));
  EXPECT_EQ(t.encode("hello", true), (std::vector<int32_t>{261, 259}));
}

TEST(TokenizerVocabMerges, OtherTokenizerClassesAreUnsupported) {
  TempDir a, b;
  write_vocab_merges_dir(a, tiny_tokenizer_json(), "LlamaTokenizer");
  EXPECT_EQ(error_code([&] { Tokenizer::from_dir(a.path()); }), ErrorCode::Unsupported);
  const std::string message = error_message([&] { Tokenizer::from_dir(a.path()); });
  EXPECT_TRUE(contains(message, "LlamaTokenizer")) << message;
  write_vocab_merges_dir(b, tiny_tokenizer_json());
  b.write("tokenizer_config.json", "{}");
  EXPECT_EQ(error_code([&] { Tokenizer::from_dir(b.path()); }), ErrorCode::Unsupported);
}

TEST(TokenizerVocabMerges, MissingFilesAreNotFound) {
  TempDir a, b;
  write_vocab_merges_dir(a, tiny_tokenizer_json());
  std::remove(a.file("merges.txt").c_str());
  const std::string message = error_message([&] { Tokenizer::from_dir(a.path()); });
  EXPECT_TRUE(contains(message, "merges.txt")) << message;
  EXPECT_EQ(error_code([&] { Tokenizer::from_dir(a.path()); }), ErrorCode::NotFound);
  write_vocab_merges_dir(b, tiny_tokenizer_json());
  std::remove(b.file("tokenizer_config.json").c_str());
  EXPECT_EQ(error_code([&] { Tokenizer::from_dir(b.path()); }), ErrorCode::NotFound);
}

TEST(TokenizerVocabMerges, MalformedFilesNameTheFileAndLine) {
  const auto expect_invalid = [](const std::string& file, const std::string& bytes,
                                 const std::vector<std::string>& parts) {
    TempDir dir;
    write_vocab_merges_dir(dir, tiny_tokenizer_json());
    dir.write(file, bytes);
    EXPECT_EQ(error_code([&] { Tokenizer::from_dir(dir.path()); }), ErrorCode::InvalidFormat) << bytes;
    const std::string message = error_message([&] { Tokenizer::from_dir(dir.path()); });
    for (const std::string& part : parts) EXPECT_TRUE(contains(message, part)) << message;
  };
  expect_invalid("vocab.json", "{\"a\": 1,", {"vocab.json", "not valid JSON"});
  expect_invalid("vocab.json", "[1, 2]", {"vocab.json", "not an object"});
  expect_invalid("vocab.json", "{\"a\": -1}", {"vocab.json", "'a'"});
  expect_invalid("vocab.json", "{\"a\": \"x\"}", {"vocab.json", "'a'"});
  expect_invalid("merges.txt", "#version: 0.2\nh e\nl\n", {"merges.txt", "line 3", "'l'"});
  expect_invalid("merges.txt", "h e l\n", {"merges.txt", "line 1"});
  expect_invalid("merges.txt", "#version: 0.2\n\nh e\nq z\n", {"merges.txt", "line 4", "'qz' is not in vocab.json"});
  expect_invalid("merges.txt", "h e\nhe \xE2\x82\xAC\n", {"merges.txt", "line 2", "is not in vocab.json"});
  expect_invalid("tokenizer_config.json",
                 R"({"tokenizer_class": "Qwen2Tokenizer", "added_tokens_decoder": {"x": {"content": "<a>"}}})",
                 {"tokenizer_config.json", "added_tokens_decoder['x']"});
  expect_invalid("tokenizer_config.json",
                 R"({"tokenizer_class": "Qwen2Tokenizer", "added_tokens_decoder": {"999999999": {"content": "<a>"}}})",
                 {"tokenizer_config.json", "added_tokens_decoder['999999999']"});
  expect_invalid("tokenizer_config.json",
                 R"({"tokenizer_class": "Qwen2Tokenizer", "added_tokens_decoder": {"300": {"content": 5}}})",
                 {"tokenizer_config.json", "content"});
}

TEST(TokenizerVocabMerges, MergesFileWithoutHeaderOrWithCrLfLoads) {
  TempDir a, b;
  write_vocab_merges_dir(a, tiny_tokenizer_json());
  a.write("merges.txt", "h e\r\nl l\r\n\r\nhe ll\r\nhell o\r\n");
  EXPECT_EQ(Tokenizer::from_dir(a.path()).encode("hello"), (std::vector<int32_t>{259}));
  write_vocab_merges_dir(b, tiny_tokenizer_json());
  EXPECT_EQ(Tokenizer::from_dir(b.path()).encode("hello hell"), (std::vector<int32_t>{259, ' ', 258}));
}

}  // namespace
}  // namespace izwi
