// The cached token masks against brute force: at every step of random walks, the bitmask equals
// trying every token of the vocabulary on the matcher (accept, then roll back).

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/structured_schema_cases.h"
#include "common/structured_walk.h"
#include "common/synthetic_vocabulary.h"
#include "izwi/tokenizer.h"
#include "structured/masker_cache.h"
#include "structured/schema_compiler.h"
#include "structured/token_mask.h"

namespace izwi::structured {
namespace {

using nlohmann::json;

/// Compares the mask with brute force at each step of a few random walks; returns the first mismatch.
std::string first_mismatch(const std::shared_ptr<const Grammar>& grammar,
                           const std::shared_ptr<const TokenVocabulary>& vocab, int walks, size_t steps) {
  const TokenMasker masker(grammar, vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  std::mt19937 rng(99);
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher matcher(grammar);
    std::string text;
    for (size_t step = 0; step < steps; ++step) {
      masker.fill_next_token_bitmask(matcher, mask.data());
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab->size(); ++id) {
        const bool in_mask = (mask[static_cast<size_t>(id) / 32] >> (id % 32)) & 1;
        const size_t before = matcher.num_steps();
        const bool accepted = masker.accept_token(matcher, id);
        if (matcher.num_steps() > before) matcher.rollback(1);
        if (in_mask != accepted) {
          return "after \"" + text + "\": token " + std::to_string(id) + " \"" + vocab->bytes(id) + "\" in mask " +
                 std::to_string(in_mask) + ", accepted " + std::to_string(accepted);
        }
        if (accepted && !vocab->is_stop(id)) allowed.push_back(id);
      }
      if (allowed.empty()) break;
      const int32_t id = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
      masker.accept_token(matcher, id);
      text += vocab->bytes(id);
    }
  }
  return "";
}

std::shared_ptr<const TokenVocabulary> vocabulary(size_t size) {
  std::vector<std::string> tokens = testing::synthetic_vocabulary(size);
  const int32_t stop = static_cast<int32_t>(tokens.size() - 1);
  return std::make_shared<TokenVocabulary>(std::move(tokens), std::vector<int32_t>{stop});
}

TEST(StructuredTokenMask, EqualsBruteForce) {
  const auto vocab = vocabulary(3000);
  for (
      const char* schema : {
          R"({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"},
               "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}, "required": ["name"]})",
          R"({"type": "array", "items": {"type": "number"}, "maxItems": 5})",
          R"({"type": "string", "minLength": 2, "maxLength": 6})",
          R"({"type": "string", "pattern": "^[a-z]+\\d?$"})",
          R"({"anyOf": [{"type": "integer", "minimum": -50, "maximum": 50}, {"type": "boolean"}]})",
          R"({"$defs": {"t": {"type": "object", "properties": {"c": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}},
               "$ref": "#/$defs/t"})",
          R"({})",
      }) {
    EXPECT_EQ(first_mismatch(compile_json_schema(json::parse(schema)), vocab, 3, 40), "") << schema;
  }
  EXPECT_EQ(first_mismatch(compile_any_json_object(), vocab, 3, 40), "");
}

TEST(StructuredTokenMask, EqualsBruteForceOnEverySchemaCase) {
  const auto vocab = vocabulary(2000);
  for (const testing::SchemaCase& c : testing::kSchemaCases) {
    EXPECT_EQ(first_mismatch(compile_json_schema(json::parse(c.schema)), vocab, 1, 30), "") << c.name;
  }
}

TEST(StructuredTokenMask, SpecialTokensAreNeverAllowedAndStopOnlyAtTheEnd) {
  // Ids 3 and 4 have no bytes (special tokens); 5 is the stop token.
  const auto vocab = std::make_shared<TokenVocabulary>(std::vector<std::string>{"[", "1", "]", "", "", "x", ",", " "},
                                                       std::vector<int32_t>{5});
  const auto grammar = compile_json_schema(json::parse(R"({"type": "array", "items": {"type": "integer"}})"));
  const TokenMasker masker(grammar, vocab);
  GrammarMatcher matcher(grammar);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  masker.fill_next_token_bitmask(matcher, mask.data());
  EXPECT_EQ(mask[0], (1u << 0) | (1u << 7));  // "[" or leading whitespace
  EXPECT_FALSE(masker.accept_token(matcher, 5));
  ASSERT_TRUE(masker.accept_token(matcher, 0));
  ASSERT_TRUE(masker.accept_token(matcher, 1));
  masker.fill_next_token_bitmask(matcher, mask.data());
  EXPECT_EQ(mask[0], (1u << 1) | (1u << 2) | (1u << 6) | (1u << 7));
  ASSERT_TRUE(masker.accept_token(matcher, 2));
  masker.fill_next_token_bitmask(matcher, mask.data());
  EXPECT_EQ(mask[0], (1u << 5) | (1u << 7));  // stop, or trailing whitespace
  EXPECT_TRUE(masker.accept_token(matcher, 5));
  EXPECT_FALSE(masker.accept_token(matcher, 3));
}

TEST(StructuredTokenMask, RealTokenizersDecodeToValidDocuments) {
  const json schema = json::parse(
      R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "n": {"type": "integer"},
          "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"enum": ["a", "b c"]}, "maxItems": 3}},
          "required": ["name", "n", "ok"], "additionalProperties": false})");
  const auto grammar = compile_json_schema(schema);
  for (const char* fixture : {"tokenizer-qwen2-style", "tokenizer-llama3-style", "tokenizer-hf-spm-llama2"}) {
    const Tokenizer tokenizer = Tokenizer::from_dir(std::string(IZWI_TEST_DATA_DIR) + "/" + fixture);
    // A stop id of its own: the fixtures' EOS ids, where they have any, are special tokens too.
    const auto vocab = std::make_shared<TokenVocabulary>(
        TokenVocabulary::from_tokenizer(tokenizer, std::vector<int32_t>{tokenizer.vocab_size() - 1}));
    const TokenMasker masker(grammar, vocab);
    std::mt19937 rng(3);
    int finished = 0;
    for (int w = 0; w < 10; ++w) {
      GrammarMatcher matcher(grammar);
      const testing::Walk walk = testing::random_walk(masker, matcher, rng, 150, &schema);
      ASSERT_EQ(walk.failure, "") << fixture << ": " << walk.text;
      for (const int32_t id : walk.ids) ASSERT_FALSE(tokenizer.is_special(id)) << fixture << " id " << id;
      if (!walk.finished) continue;
      ++finished;
      // What the client sees is the tokenizer's decoding of the ids.
      EXPECT_EQ(testing::document_violation(tokenizer.decode(walk.ids), schema), "") << fixture << ": " << walk.text;
    }
    EXPECT_GE(finished, 5) << fixture;
  }
}

TEST(StructuredTokenMask, ConcurrentMatchersShareOneMasker) {
  const auto vocab = vocabulary(3000);
  const auto grammar = compile_json_schema(json::parse(
      R"({"type": "array", "items": {"type": "object", "properties": {"k": {"enum": ["a", "b"]},
          "v": {"anyOf": [{"type": "string"}, {"type": "number"}]}}, "required": ["k", "v"]}})"));
  const TokenMasker shared(grammar, vocab);
  // Each thread replays its own walk's tokens and compares every mask with a private masker's.
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < failures.size(); ++t) {
    threads.emplace_back([&, t] {
      const TokenMasker own(grammar, vocab);
      GrammarMatcher a(grammar);
      GrammarMatcher b(grammar);
      std::vector<uint32_t> mask_a(vocab->bitmask_words());
      std::vector<uint32_t> mask_b(vocab->bitmask_words());
      std::mt19937 rng(static_cast<uint32_t>(t));
      for (int step = 0; step < 60; ++step) {
        shared.fill_next_token_bitmask(a, mask_a.data());
        own.fill_next_token_bitmask(b, mask_b.data());
        if (mask_a != mask_b) {
          failures[t] = "masks differ at step " + std::to_string(step);
          return;
        }
        std::vector<int32_t> allowed;
        for (int32_t id = 0; id < vocab->size(); ++id) {
          if (((mask_a[static_cast<size_t>(id) / 32] >> (id % 32)) & 1) && !vocab->is_stop(id)) allowed.push_back(id);
        }
        if (allowed.empty()) return;
        const int32_t id = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
        shared.accept_token(a, id);
        own.accept_token(b, id);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
}

TEST(StructuredMaskerCache, SharesMaskersBySchemaTextAndEvictsTheOldest) {
  MaskerCache cache(vocabulary(500), {}, 2);
  const json a = json::parse(R"({"type": "string"})");
  const json b = json::parse(R"({"type": "integer"})");
  const auto first = cache.for_schema(a);
  EXPECT_EQ(cache.for_schema(json::parse(R"({ "type" : "string" })")), first);
  EXPECT_NE(cache.for_schema(b), first);
  EXPECT_EQ(cache.for_schema(a), first);            // a is now the most recent
  EXPECT_NE(cache.for_any_json_object(), nullptr);  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.for_schema(a), first);
  EXPECT_THROW(cache.for_schema(json::parse(R"({"not": {}})")), Error);
  EXPECT_EQ(cache.size(), 2u);
  GrammarMatcher matcher(first->grammar());  // the cached masker's grammar is the schema's
  EXPECT_TRUE(matcher.accept_bytes("\"x\""));
  EXPECT_TRUE(matcher.can_end());
}

}  // namespace
}  // namespace izwi::structured
