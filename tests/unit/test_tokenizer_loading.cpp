// tokenizer.json components one at a time (merges in both forms, ignore_merges, added-token
// options, post-processor, configs) and every malformed or unsupported input.

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
using testing::write_tokenizer_dir;

Tokenizer load(const TempDir& dir, const nlohmann::json& tokenizer, const nlohmann::json& config = nullptr,
               const nlohmann::json& generation = nullptr) {
  return Tokenizer::from_dir(write_tokenizer_dir(dir, tokenizer, config, generation));
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

TEST(TokenizerLoading, MergesInStringAndPairFormApplyByRank) {
  TempDir dir;
  const Tokenizer t = load(dir, tiny_tokenizer_json());
  EXPECT_EQ(t.encode("hello"), (std::vector<int32_t>{259}));
  EXPECT_EQ(t.encode("hell"), (std::vector<int32_t>{258}));
  EXPECT_EQ(t.encode("helo"), (std::vector<int32_t>{256, 'l', 'o'}));
  EXPECT_EQ(t.encode("hello hello"), (std::vector<int32_t>{259, ' ', 259}));
  EXPECT_EQ(t.vocab_size(), 304);
  EXPECT_EQ(t.token_to_id("Ġ"), 32);  // the byte-level spelling of a space
  EXPECT_EQ(t.token_bytes(32), " ");
}

TEST(TokenizerLoading, IgnoreMergesTakesAWholeVocabularyEntry) {
  TempDir a, b;
  nlohmann::json j = tiny_tokenizer_json();
  EXPECT_EQ(load(a, j).encode("xyz"), (std::vector<int32_t>{'x', 'y', 'z'}));
  j["model"]["ignore_merges"] = true;
  EXPECT_EQ(load(b, j).encode("xyz"), (std::vector<int32_t>{260}));
}

TEST(TokenizerLoading, PreTokenizerStepsApplyInOrder) {
  TempDir a, b;
  nlohmann::json j = tiny_tokenizer_json();
  j["pre_tokenizer"]["add_prefix_space"] = true;  // GPT-2 style: a space before the text
  EXPECT_EQ(load(a, j).encode("hello"), (std::vector<int32_t>{' ', 259}));
  // A literal Split isolates each "l", so "ll" can no longer merge.
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"String", "l"}}}, {"behavior", "Isolated"}, {"invert", false}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  EXPECT_EQ(load(b, j).encode("hello"), (std::vector<int32_t>{256, 'l', 'l', 'o'}));
}

TEST(TokenizerLoading, AddedTokensMatchBeforeBpeWithLstrip) {
  TempDir dir;
  const Tokenizer t = load(dir, tiny_tokenizer_json());
  EXPECT_EQ(t.encode("he<|eot_id|>he"), (std::vector<int32_t>{256, 301, 256}));
  // <mask> swallows the spaces on its left.
  EXPECT_EQ(t.encode("he  <mask> he"), (std::vector<int32_t>{256, 303, ' ', 256}));
  EXPECT_TRUE(t.is_special(301));
  EXPECT_FALSE(t.is_special(303));
  EXPECT_EQ(t.decode({256, 301, 256}, true), "hehe");
  EXPECT_EQ(t.decode({256, 301, 256}, false), "he<|eot_id|>he");
}

TEST(TokenizerLoading, AddedTokenOptionsRstripSingleWordNormalized) {
  TempDir dir;
  nlohmann::json j = tiny_tokenizer_json();
  const auto added = [](int id, const std::string& content, bool single_word, bool rstrip, bool normalized) {
    return nlohmann::json{{"id", id},        {"content", content}, {"single_word", single_word},
                          {"lstrip", false}, {"rstrip", rstrip},   {"normalized", normalized},
                          {"special", false}};
  };
  j["added_tokens"].push_back(added(304, "caf\xC3\xA9", false, false, true));
  j["added_tokens"].push_back(added(305, "end", true, false, false));
  j["added_tokens"].push_back(added(306, "<r>", false, true, false));
  const Tokenizer t = load(dir, j);
  // Matched after NFC: the decomposed e + U+0301 composes to the token's é.
  EXPECT_EQ(t.encode("cafe\xCC\x81"), (std::vector<int32_t>{304}));
  // Only as a word of its own.
  EXPECT_EQ(t.encode("endless end"), (std::vector<int32_t>{'e', 'n', 'd', 'l', 'e', 's', 's', ' ', 305}));
  // Swallows the spaces on its right.
  EXPECT_EQ(t.encode("<r>   he"), (std::vector<int32_t>{306, 256}));
}

TEST(TokenizerLoading, TemplateProcessingAddsBosOnlyWithSpecialTokens) {
  TempDir dir;
  nlohmann::json j = tiny_tokenizer_json();
  j["post_processor"] = {
      {"type", "Sequence"},
      {"processors",
       {{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}},
        {{"type", "TemplateProcessing"},
         {"single",
          {{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
           {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
         {"pair", nlohmann::json::array()},
         {"special_tokens",
          {{"<|begin_of_text|>",
            {{"id", "<|begin_of_text|>"}, {"ids", {300}}, {"tokens", {"<|begin_of_text|>"}}}}}}}}}};
  const Tokenizer t = load(dir, j);
  EXPECT_EQ(t.encode("hello", true), (std::vector<int32_t>{300, 259}));
  EXPECT_EQ(t.encode("hello", false), (std::vector<int32_t>{259}));
}

TEST(TokenizerLoading, ConfigsGiveBosEosAndAddBosToken) {
  TempDir dir;
  const nlohmann::json config = {{"bos_token", "<|begin_of_text|>"},
                                 {"eos_token", {{"content", "<|eot_id|>"}, {"special", true}}},
                                 {"add_bos_token", true}};
  const nlohmann::json generation = {{"bos_token_id", 300}, {"eos_token_id", {302, 301}}};
  const Tokenizer t = load(dir, tiny_tokenizer_json(), config, generation);
  EXPECT_EQ(t.bos_id(), 300);
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{301, 302}));
  EXPECT_EQ(t.encode("hello", true), (std::vector<int32_t>{300, 259}));

  TempDir plain;
  const Tokenizer u = load(plain, tiny_tokenizer_json(), nullptr, nlohmann::json{{"eos_token_id", 302}});
  EXPECT_EQ(u.bos_id(), std::nullopt);
  EXPECT_EQ(u.eos_ids(), (std::vector<int32_t>{302}));
  EXPECT_EQ(u.encode("hello", true), (std::vector<int32_t>{259}));
}

TEST(TokenizerLoading, DecodeRejectsIdsOutsideTheVocabulary) {
  TempDir dir;
  const Tokenizer t = load(dir, tiny_tokenizer_json());
  for (int32_t id : {-1, 304, 280}) {  // 280 lies in a gap of the id space
    EXPECT_NE(error_message([&] {
                t.decode({1, id});
              }).find("token id " + std::to_string(id) + " is outside the vocabulary"),
              std::string::npos);
    EXPECT_EQ(error_code([&] { t.token_bytes(id); }), ErrorCode::InvalidArgument);
  }
}

TEST(TokenizerLoading, MissingFolderOrFileIsNotFound) {
  EXPECT_EQ(error_code([] { Tokenizer::from_dir("/no/such/folder"); }), ErrorCode::NotFound);
  TempDir empty;
  const std::string message = error_message([&] { Tokenizer::from_dir(empty.path()); });
  EXPECT_NE(message.find("neither tekken.json nor tokenizer.json"), std::string::npos) << message;
}

TEST(TokenizerLoading, BadJsonNamesTheFile) {
  TempDir dir;
  dir.write("tokenizer.json", "{\"model\": ");
  const std::string message = error_message([&] { Tokenizer::from_dir(dir.path()); });
  EXPECT_NE(message.find(dir.file("tokenizer.json") + "' is not valid JSON"), std::string::npos) << message;
  TempDir config;
  write_tokenizer_dir(config, tiny_tokenizer_json());
  config.write("tokenizer_config.json", "[1,");
  EXPECT_NE(error_message([&] { Tokenizer::from_dir(config.path()); }).find("tokenizer_config.json"),
            std::string::npos);
}

// One change to the tiny tokenizer.json (a JSON pointer and its new value) and the error text it
// must produce.
struct Case {
  std::string pointer;
  nlohmann::json value;
  std::string expected;
};

// Each patched file fails to load with `code` and a message naming the file and the problem.
void expect_patched_files_fail(const std::vector<Case>& cases, ErrorCode code) {
  for (const Case& c : cases) {
    TempDir dir;
    nlohmann::json j = tiny_tokenizer_json();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    write_tokenizer_dir(dir, j);
    const std::string message = error_message([&] { Tokenizer::from_dir(dir.path()); });
    EXPECT_NE(message.find(dir.file("tokenizer.json")), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.pointer << ": " << message;
    EXPECT_EQ(error_code([&] { Tokenizer::from_dir(dir.path()); }), code) << c.pointer;
  }
}

TEST(TokenizerLoading, UnsupportedComponentsAreNamed) {
  const std::vector<Case> cases = {
      {"/normalizer", {{"type", "BertNormalizer"}}, "normalizer 'BertNormalizer' is not supported"},
      {"/normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Precompiled"}}}}}, "normalizer 'Precompiled'"},
      {"/pre_tokenizer", {{"type", "BertPreTokenizer"}}, "pre_tokenizer 'BertPreTokenizer' is not supported"},
      {"/pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}, {"invert", false}},
       "split behavior 'Sideways' is not supported"},
      {"/pre_tokenizer",
       {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Whitespace"}}}}},
       "pre_tokenizer 'Whitespace' after ByteLevel is not supported"},
      {"/pre_tokenizer",
       {{"type", "Metaspace"}, {"replacement", "_"}, {"prepend_scheme", "sometimes"}},
       "prepend_scheme 'sometimes' is not supported"},
      {"/model/type", "WordPiece", "model type 'WordPiece' is not supported"},
      {"/decoder", {{"type", "WordPiece"}}, "decoder 'WordPiece' is not supported"},
      {"/decoder",
       {{"type", "Sequence"}, {"decoders", {{{"type", "Fuse"}}, {{"type", "CTC"}}}}},
       "decoder 'CTC' is not supported"},
      {"/post_processor", {{"type", "BertProcessing"}}, "post_processor 'BertProcessing' is not supported"},
      {"/truncation", {{"max_length", 8}}, "'truncation' is not supported"},
  };
  expect_patched_files_fail(cases, ErrorCode::Unsupported);
}

TEST(TokenizerLoading, MalformedContentsAreInvalidFormat) {
  const std::vector<Case> cases = {
      {"/model/merges/0", "h e x", "model.merges[0] is neither"},
      {"/model/merges/1", "q zz", "uses a token missing from model.vocab"},
      {"/model/vocab/a", "seven", "model.vocab['a'] is not a valid id"},
      {"/pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}},
       "does not compile"},
      {"/added_tokens/0/id", "x", "added_tokens[0]"},
      {"/added_tokens/0/id", 2147483647, "added_tokens[0] has id 2147483647, far outside"},
      {"/model/unk_token", "<nope>", "model.unk_token '<nope>' is not in model.vocab"},
      {"/decoder",
       {{"type", "Strip"}, {"content", "ab"}, {"start", 1}, {"stop", 0}},
       "'content' must be one character"},
  };
  expect_patched_files_fail(cases, ErrorCode::InvalidFormat);
  TempDir bad_bos;
  const std::string message = error_message([&] {
    load(bad_bos, tiny_tokenizer_json(), nlohmann::json{{"bos_token", "<nope>"}});
  });
  EXPECT_NE(message.find("tokenizer_config.json: bos_token '<nope>' is not a token of the vocabulary"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace izwi
