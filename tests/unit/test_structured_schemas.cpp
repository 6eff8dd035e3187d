// Constrained decoding end to end without a model: for each schema (together they use every
// supported keyword), random walks over the token masks of a small and a large vocabulary. Every
// walk that ends gives JSON that parses and validates (tests/common/json_schema_check, an
// independent validator), and at every step the mask is never empty and the stop token is allowed
// exactly when the text so far is a complete, valid document.

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_schema_check.h"
#include "common/structured_schema_cases.h"
#include "common/structured_walk.h"
#include "common/synthetic_vocabulary.h"
#include "structured/schema_compiler.h"
#include "structured/token_mask.h"

namespace izwi::structured {
namespace {

using nlohmann::json;

std::shared_ptr<const TokenVocabulary> vocabulary(size_t size) {
  std::vector<std::string> tokens = testing::synthetic_vocabulary(size);
  const int32_t stop = static_cast<int32_t>(tokens.size() - 1);
  return std::make_shared<TokenVocabulary>(std::move(tokens), std::vector<int32_t>{stop});
}

const std::shared_ptr<const TokenVocabulary>& small_vocabulary() {
  static const std::shared_ptr<const TokenVocabulary> v = vocabulary(2000);
  return v;
}

const std::shared_ptr<const TokenVocabulary>& large_vocabulary() {
  static const std::shared_ptr<const TokenVocabulary> v = vocabulary(50000);
  return v;
}

void check_walks(const json& schema, const std::shared_ptr<const Grammar>& grammar,
                 const std::shared_ptr<const TokenVocabulary>& vocab, int walks, size_t max_tokens) {
  const TokenMasker masker(grammar, vocab);
  std::mt19937 rng(1234);
  int finished = 0;
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher matcher(grammar);
    const testing::Walk walk = testing::random_walk(masker, matcher, rng, max_tokens, &schema);
    ASSERT_EQ(walk.failure, "") << "walk " << w << " text: " << walk.text;
    if (!walk.finished) continue;
    ++finished;
    EXPECT_EQ(testing::document_violation(walk.text, schema), "") << walk.text;
  }
  // Walks can run out of budget (a long string, a deep tree); most must end.
  EXPECT_GE(finished * 2, walks) << "only " << finished << " of " << walks << " walks ended";
}

// One test per vocabulary over all the schema cases (not one per case: each ctest entry starts the
// binary, which loads libtorch); failures name the case.
TEST(StructuredSchemaWalks, SmallVocabularyOutputsValidate) {
  for (const testing::SchemaCase& c : testing::kSchemaCases) {
    SCOPED_TRACE(c.name);
    const json schema = json::parse(c.schema);
    check_walks(schema, compile_json_schema(schema), small_vocabulary(), 40, 200);
  }
}

TEST(StructuredSchemaWalks, LargeVocabularyOutputsValidate) {
  for (const testing::SchemaCase& c : testing::kSchemaCases) {
    SCOPED_TRACE(c.name);
    const json schema = json::parse(c.schema);
    check_walks(schema, compile_json_schema(schema), large_vocabulary(), 6, 160);
  }
}

TEST(StructuredSchemaWalks, CompactOutputsValidate) {
  SchemaCompileOptions compact;
  compact.max_whitespace = 0;
  for (const testing::SchemaCase& c : testing::kSchemaCases) {
    SCOPED_TRACE(c.name);
    const json schema = json::parse(c.schema);
    check_walks(schema, compile_json_schema(schema, compact), small_vocabulary(), 10, 200);
  }
}

TEST(StructuredSchemaWalks, JsonObjectModeGivesObjects) {
  const std::shared_ptr<const Grammar> grammar = compile_any_json_object();
  const TokenMasker masker(grammar, small_vocabulary());
  const json schema = {{"type", "object"}};
  std::mt19937 rng(5);
  int finished = 0;
  for (int w = 0; w < 40; ++w) {
    GrammarMatcher matcher(grammar);
    const testing::Walk walk = testing::random_walk(masker, matcher, rng, 200, &schema);
    ASSERT_EQ(walk.failure, "") << walk.text;
    finished += walk.finished;
  }
  EXPECT_GE(finished, 20);
}

}  // namespace
}  // namespace izwi::structured
