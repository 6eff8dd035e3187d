// Schemas the compiler refuses: each is a typed izwi::Error whose message names the keyword or
// limit and where it is in the schema.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/error_message.h"
#include "structured/schema_compiler.h"

namespace izwi::structured {
namespace {

using izwi::testing::error_code_of;
using izwi::testing::error_message;
using nlohmann::json;

void expect_error(const std::string& schema_text, ErrorCode code, const std::vector<std::string>& named,
                  const SchemaCompileOptions& options = {}) {
  const json schema = json::parse(schema_text);
  const auto compile = [&] { compile_json_schema(schema, options); };
  EXPECT_EQ(error_code_of(compile), code) << schema_text;
  const std::string message = error_message(compile);
  for (const std::string& part : named) EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(StructuredSchemaErrors, UnknownKeywordIsNamedWithItsPath) {
  expect_error(R"({"type": "object", "properties": {"x": {"not": {"type": "null"}}}})", ErrorCode::Unsupported,
               {"'not'", "/properties/x"});
  expect_error(R"({"type": "array", "uniqueItems": true})", ErrorCode::Unsupported, {"'uniqueItems'"});
  expect_error(R"({"type": "number", "multipleOf": 3})", ErrorCode::Unsupported, {"'multipleOf'"});
  expect_error(R"({"allOf": [{"type": "string"}]})", ErrorCode::Unsupported, {"'allOf'"});
  expect_error(R"({"type": "string", "format": "hostname"})", ErrorCode::Unsupported, {"format", "hostname"});
  expect_error(R"({"$ref": "https://example.com/s.json"})", ErrorCode::Unsupported, {"$ref"});
  expect_error(R"({"$ref": "#/$defs/a", "type": "object"})", ErrorCode::Unsupported, {"'type'", "'$ref'"});
}

TEST(StructuredSchemaErrors, TooDeep) {
  json schema = {{"type", "integer"}};
  for (int i = 0; i < 40; ++i) schema = {{"type", "array"}, {"items", schema}};
  expect_error(schema.dump(), ErrorCode::InvalidArgument, {"max_depth"});
  SchemaCompileOptions deep;
  deep.max_depth = 64;
  EXPECT_NO_THROW(compile_json_schema(schema, deep));
}

TEST(StructuredSchemaErrors, TooLarge) {
  SchemaCompileOptions small;
  small.max_schema_bytes = 100;
  json schema = {{"enum", json::array()}};
  for (int i = 0; i < 50; ++i) schema["enum"].push_back("value" + std::to_string(i));
  expect_error(schema.dump(), ErrorCode::InvalidArgument, {"max_schema_bytes"}, small);
  expect_error(R"({"type": "string", "maxLength": 1000000})", ErrorCode::InvalidArgument, {"max_grammar_states"});
  expect_error(R"({"type": "string", "pattern": "^a{1000}b{1000}c{1000}(d{1000}){1000}$"})", ErrorCode::InvalidArgument,
               {"max_grammar_states"});
}

TEST(StructuredSchemaErrors, BadPatterns) {
  expect_error(R"({"type": "string", "pattern": "(ab"})", ErrorCode::InvalidArgument, {"/pattern", "'('"});
  expect_error(R"({"type": "string", "pattern": "a{3,1}"})", ErrorCode::InvalidArgument, {"/pattern"});
  expect_error(R"({"type": "string", "pattern": "*a"})", ErrorCode::InvalidArgument, {"/pattern", "repeat"});
  expect_error(R"({"type": "string", "pattern": "(?=a)b"})", ErrorCode::Unsupported, {"/pattern", "lookaround"});
  expect_error(R"({"type": "string", "pattern": "a\\bc"})", ErrorCode::Unsupported, {"/pattern", "\\b"});
  expect_error(R"({"type": "string", "pattern": "a^b"})", ErrorCode::Unsupported, {"/pattern", "anchor"});
  expect_error(R"({"properties": {"p": {"type": "string", "pattern": "[a-"}}})", ErrorCode::InvalidArgument,
               {"/properties/p/pattern"});
}

TEST(StructuredSchemaErrors, MalformedOrUnsatisfiable) {
  expect_error(R"({"$ref": "#/$defs/missing"})", ErrorCode::InvalidArgument, {"#/$defs/missing"});
  expect_error(R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}, "$ref": "#/$defs/a"})",
               ErrorCode::InvalidArgument, {"refers back to itself"});
  expect_error(R"({"type": "object", "properties": {"x": false}})", ErrorCode::InvalidArgument, {"/properties/x"});
  expect_error(R"({"type": "string", "minLength": 5, "maxLength": 2})", ErrorCode::InvalidArgument, {"maxLength"});
  expect_error(R"({"type": "array", "minItems": 3, "maxItems": 1})", ErrorCode::InvalidArgument, {"minItems"});
  expect_error(R"({"type": "integer", "minimum": 5, "maximum": 1})", ErrorCode::InvalidArgument, {"minimum"});
  expect_error(R"({"type": "number", "minimum": 0.2, "maximum": 0.8})", ErrorCode::Unsupported, {"minimum"});
  expect_error(R"({"type": "integer", "minimum": 1e300})", ErrorCode::Unsupported, {"minimum"});
  expect_error(R"({"type": "strin"})", ErrorCode::InvalidArgument, {"/type", "strin"});
  expect_error(R"({"type": "string", "enum": [1, 2]})", ErrorCode::InvalidArgument, {"/enum"});
  expect_error(R"({"type": "string", "minLength": -1})", ErrorCode::InvalidArgument, {"minLength"});
  expect_error(R"([1, 2])", ErrorCode::InvalidArgument, {"must be an object"});
}

}  // namespace
}  // namespace izwi::structured
