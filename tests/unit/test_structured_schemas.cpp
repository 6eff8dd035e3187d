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
#include "common/structured_walk.h"
#include "common/synthetic_vocabulary.h"
#include "structured/schema_compiler.h"
#include "structured/token_mask.h"

namespace izwi::structured {
namespace {

using nlohmann::json;

struct SchemaCase {
  const char* name;
  const char* schema;
};

const SchemaCase kSchemas[] = {
    {"string", R"({"type": "string"})"},
    {"integer", R"({"type": "integer"})"},
    {"number", R"({"type": "number"})"},
    {"boolean", R"({"type": "boolean"})"},
    {"null", R"({"type": "null"})"},
    {"type_union", R"({"type": ["string", "null"]})"},
    {"closed_object",
     R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
         "required": ["name", "age"], "additionalProperties": false})"},
    {"optional_properties",
     R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
         "required": ["b"]})"},
    {"array_items", R"({"type": "array", "items": {"type": "integer"}})"},
    {"array_bounds", R"({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4})"},
    {"tuple", R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false})"},
    {"tuple_then_items",
     R"({"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "null"}, "minItems": 3})"},
    {"enum_strings", R"({"enum": ["red", "green", "blue"]})"},
    {"enum_mixed", R"({"enum": [1, "two", null, true, {"k": [1, 2]}, "quote\"d"]})"},
    {"const", R"({"const": "fixed"})"},
    {"typed_enum", R"({"type": "string", "enum": ["a", "b", 3]})"},
    {"any_of", R"({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 0}]})"},
    {"one_of_tagged",
     R"({"oneOf": [
          {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "minimum": 0}},
           "required": ["kind", "r"], "additionalProperties": false},
          {"type": "object", "properties": {"kind": {"const": "square"},
           "side": {"type": "integer", "minimum": 1, "maximum": 100}},
           "required": ["kind", "side"], "additionalProperties": false}]})"},
    {"ref_defs",
     R"({"$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                             "required": ["x", "y"]}},
         "type": "object", "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
         "required": ["from", "to"]})"},
    {"ref_recursive_tree",
     R"({"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
                            "required": ["value"]}},
         "$ref": "#/$defs/node"})"},
    {"ref_root_list",
     R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 5},
         "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["name", "next"]})"},
    {"string_length", R"({"type": "string", "minLength": 2, "maxLength": 5})"},
    {"string_min_length", R"({"type": "string", "minLength": 3})"},
    {"format_date", R"({"type": "string", "format": "date"})"},
    {"format_date_time", R"({"type": "string", "format": "date-time"})"},
    {"format_uuid", R"({"type": "string", "format": "uuid"})"},
    {"format_email", R"({"type": "string", "format": "email"})"},
    {"pattern_anchored", R"({"type": "string", "pattern": "^[A-Z]{2}-\\d{3,5}$"})"},
    {"pattern_search", R"({"type": "string", "pattern": "(cat|dog)s?"})"},
    {"pattern_dot_star", R"({"type": "string", "pattern": "^a.*b+c?$"})"},
    {"pattern_escapes", R"({"type": "string", "pattern": "^\"[a\\\\]+\"$"})"},
    {"pattern_classes", R"({"type": "string", "pattern": "^[^0-9\\s]\\w{0,3}(?:x|yz)*$"})"},
    {"integer_range", R"({"type": "integer", "minimum": -20, "maximum": 300})"},
    {"integer_minimum", R"({"type": "integer", "minimum": 5})"},
    {"integer_maximum", R"({"type": "integer", "maximum": -7})"},
    {"number_range", R"({"type": "number", "minimum": -1.5, "maximum": 2.5})"},
    {"number_minimum", R"({"type": "number", "minimum": 0})"},
    {"any_value", R"({})"},
    {"any_object", R"({"type": "object"})"},
    {"map", R"({"type": "object", "additionalProperties": {"type": "integer"}})"},
    {"empty_object", R"({"type": "object", "properties": {}, "additionalProperties": false})"},
    {"required_only", R"({"type": "object", "required": ["id"]})"},
    {"array_of_enum", R"({"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 3})"},
    {"union_with_bounds", R"({"type": ["integer", "string"], "minimum": 1, "maximum": 9, "maxLength": 2})"},
    {"annotations",
     R"({"title": "T", "description": "d", "$schema": "https://json-schema.org/draft/2020-12/schema",
         "type": "object", "properties": {"x": {"type": "integer", "default": 3, "examples": [1]}},
         "required": ["x"]})"},
};

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

class StructuredSchemaWalks : public ::testing::TestWithParam<SchemaCase> {};

void check_walks(const json& schema, const std::shared_ptr<const Grammar>& grammar,
                 const std::shared_ptr<const TokenVocabulary>& vocab, int walks, size_t max_tokens) {
  const TokenMasker masker(grammar, vocab);
  std::mt19937 rng(1234);
  int finished = 0;
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher matcher(grammar);
    const testing::Walk walk = testing::random_walk(masker, matcher, rng, max_tokens, &schema);
    ASSERT_EQ(walk.failure, "") << "schema " << schema.dump() << " walk " << w << " text: " << walk.text;
    if (!walk.finished) continue;
    ++finished;
    EXPECT_EQ(testing::document_violation(walk.text, schema), "") << walk.text;
  }
  // Walks can run out of budget (a long string, a deep tree); most must end.
  EXPECT_GE(finished * 2, walks) << "only " << finished << " of " << walks << " walks ended";
}

TEST_P(StructuredSchemaWalks, SmallVocabularyOutputsValidate) {
  const json schema = json::parse(GetParam().schema);
  check_walks(schema, compile_json_schema(schema), small_vocabulary(), 40, 200);
}

TEST_P(StructuredSchemaWalks, LargeVocabularyOutputsValidate) {
  const json schema = json::parse(GetParam().schema);
  check_walks(schema, compile_json_schema(schema), large_vocabulary(), 6, 160);
}

TEST_P(StructuredSchemaWalks, CompactOutputsValidate) {
  const json schema = json::parse(GetParam().schema);
  SchemaCompileOptions compact;
  compact.max_whitespace = 0;
  check_walks(schema, compile_json_schema(schema, compact), small_vocabulary(), 10, 200);
}

INSTANTIATE_TEST_SUITE_P(Schemas, StructuredSchemaWalks, ::testing::ValuesIn(kSchemas),
                         [](const ::testing::TestParamInfo<SchemaCase>& info) { return std::string(info.param.name); });

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
