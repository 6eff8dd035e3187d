// The byte-level matcher on compiled schemas: what it accepts and rejects, when a document may
// end, rollback, the whitespace bound, and the number-range and pattern expansions checked
// exhaustively against the definitions.

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "structured/matcher.h"
#include "structured/schema_compiler.h"

namespace izwi::structured {
namespace {

using nlohmann::json;

/// Whether `text` is accepted whole as a complete document of `grammar`.
bool matches(const std::shared_ptr<const Grammar>& grammar, const std::string& text) {
  GrammarMatcher matcher(grammar);
  return matcher.accept_bytes(text) && matcher.can_end();
}

TEST(StructuredMatcher, EndsOnlyWhenTheDocumentIsComplete) {
  const auto grammar = compile_json_schema(json::parse(
      R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}},
          "required": ["a", "b"]})"));
  const std::string text = R"({"a": 12, "b": ["x", "y\"z"]})";
  GrammarMatcher matcher(grammar);
  for (size_t i = 0; i < text.size(); ++i) {
    EXPECT_FALSE(matcher.can_end()) << "after " << text.substr(0, i);
    ASSERT_TRUE(matcher.accept_bytes(text.substr(i, 1))) << "at " << text.substr(0, i + 1);
  }
  EXPECT_TRUE(matcher.can_end());
  EXPECT_TRUE(matcher.can_continue());  // trailing whitespace may follow
  EXPECT_TRUE(matcher.accept_bytes("\n"));
  EXPECT_TRUE(matcher.can_end());
  EXPECT_FALSE(matcher.accept_bytes("x"));
}

TEST(StructuredMatcher, RejectsWhatTheSchemaForbids) {
  const auto grammar = compile_json_schema(json::parse(
      R"({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false})"));
  EXPECT_TRUE(matches(grammar, R"({"a":1})"));
  EXPECT_TRUE(matches(grammar, "{ \"a\" : -30 }"));
  EXPECT_FALSE(matches(grammar, R"({})"));             // required
  EXPECT_FALSE(matches(grammar, R"({"a":1,"b":2})"));  // additionalProperties false
  EXPECT_FALSE(matches(grammar, R"({"a":1.5})"));      // integer
  EXPECT_FALSE(matches(grammar, R"({"a":01})"));       // JSON has no leading zeros
  EXPECT_FALSE(matches(grammar, R"({"a":1,})"));       // nor trailing commas
}

TEST(StructuredMatcher, StringsAreValidJsonText) {
  const auto grammar = compile_json_schema(json::parse(R"({"type": "string"})"));
  EXPECT_TRUE(matches(grammar, "\"caf\xc3\xa9 \\u00e9 \\n \\\" \xf0\x9f\x98\x80\""));
  EXPECT_TRUE(matches(grammar, "\"\\ud7ff\\ue000\""));
  EXPECT_FALSE(matches(grammar, "\"\\ud83d\""));       // a lone surrogate escape
  EXPECT_FALSE(matches(grammar, "\"\xc3\""));          // truncated UTF-8
  EXPECT_FALSE(matches(grammar, "\"\xed\xa0\x80\""));  // an encoded surrogate
  EXPECT_FALSE(matches(grammar, "\"\xc0\xaf\""));      // overlong
  EXPECT_FALSE(matches(grammar, "\"a\nb\""));          // raw control character
  EXPECT_FALSE(matches(grammar, "\"\\x41\""));         // not a JSON escape
}

TEST(StructuredMatcher, RollbackRestoresEarlierStates) {
  const auto grammar = compile_json_schema(json::parse(R"({"type": "array", "items": {"type": "boolean"}})"));
  GrammarMatcher matcher(grammar);
  ASSERT_TRUE(matcher.accept_bytes("[tr"));
  ASSERT_TRUE(matcher.accept_bytes("ue"));
  ASSERT_TRUE(matcher.accept_bytes("]"));
  EXPECT_TRUE(matcher.can_end());
  matcher.rollback(2);
  EXPECT_EQ(matcher.num_steps(), 1u);
  EXPECT_FALSE(matcher.accept_bytes("x"));
  EXPECT_TRUE(matcher.accept_bytes("ue,false]"));
  EXPECT_TRUE(matcher.can_end());
  GrammarMatcher copy = matcher;
  copy.rollback(copy.num_steps());
  EXPECT_FALSE(copy.can_end());
  EXPECT_TRUE(matcher.can_end());
}

TEST(StructuredMatcher, WhitespaceIsBounded) {
  SchemaCompileOptions options;
  options.max_whitespace = 4;
  const auto grammar = compile_json_schema(json::parse(R"({"type": "array", "items": {"type": "null"}})"), options);
  EXPECT_TRUE(matches(grammar, "[ \n\t\rnull    ]"));
  EXPECT_FALSE(matches(grammar, "[     null]"));
  EXPECT_TRUE(matches(grammar, "    [null]    "));
  options.max_whitespace = 0;
  const auto compact = compile_json_schema(json::parse(R"({"type": "array", "items": {"type": "null"}})"), options);
  EXPECT_TRUE(matches(compact, "[null,null]"));
  EXPECT_FALSE(matches(compact, "[null, null]"));
}

TEST(StructuredMatcher, IntegerRangesAreExact) {
  const std::vector<std::pair<std::optional<int64_t>, std::optional<int64_t>>> ranges = {
      {0, 9},  {-5, 5},  {7, 7},   {-120, -13}, {10, 999}, {1, 1000}, {-1000, 0}, {99, 101},
      {0, {}}, {13, {}}, {-7, {}}, {{}, 0},     {{}, -8},  {{}, 250}, {-999, 999}};
  for (const auto& [lo, hi] : ranges) {
    json schema = {{"type", "integer"}};
    if (lo) schema["minimum"] = *lo;
    if (hi) schema["maximum"] = *hi;
    const auto grammar = compile_json_schema(schema);
    for (int64_t x = -1500; x <= 1500; ++x) {
      const bool inside = (!lo || x >= *lo) && (!hi || x <= *hi);
      ASSERT_EQ(matches(grammar, std::to_string(x)), inside) << schema.dump() << " x=" << x;
    }
    EXPECT_FALSE(matches(grammar, "-0")) << schema.dump();
    EXPECT_FALSE(matches(grammar, "007")) << schema.dump();
  }
}

TEST(StructuredMatcher, NumberRangesGenerateOnlyNumbersInside) {
  const auto grammar = compile_json_schema(json::parse(R"({"type": "number", "minimum": -2.5, "maximum": 3})"));
  for (const char* inside : {"0", "3", "3.0", "3.000", "2.999", "-2", "-2.0", "-1.75", "0.5", "-0.25", "1"}) {
    EXPECT_TRUE(matches(grammar, inside)) << inside;
  }
  for (const char* outside : {"3.01", "4", "-3", "-2.01", "10", "1e2", "-2.5"}) {
    EXPECT_FALSE(matches(grammar, outside)) << outside;  // -2.5 is valid, but bounds round inward
  }
}

TEST(StructuredMatcher, PatternsMatchAsEcmascriptSearches) {
  struct Case {
    const char* pattern;
    std::vector<const char*> samples;
  };
  const std::vector<Case> cases = {
      {"^[A-Z]{2}-\\d{3,5}$", {"AB-123", "AB-12345", "AB-12", "ab-123", "AB-123456", "XAB-123"}},
      {"(cat|dog)s?", {"cat", "dogs", "a cat!", "cow", "", "hotdog"}},
      {"^a.*b+c?$", {"ab", "axxbbc", "abcc", "ba", "a b"}},
      {"^x{2,}$", {"x", "xx", "xxxxx", "xxy"}},
      {"^(?:ab|c)+$", {"ab", "cab", "abab", "", "abc", "b"}},
      {"^[^a-c]?z$", {"z", "dz", "az", "zz", "ddz"}},
      {"^\\.\\*$", {".*", "ab", "."}},
  };
  for (const Case& c : cases) {
    const auto grammar = compile_json_schema({{"type", "string"}, {"pattern", c.pattern}});
    const std::regex reference(c.pattern);
    for (const char* s : c.samples) {
      EXPECT_EQ(matches(grammar, json(s).dump()), std::regex_search(std::string(s), reference))
          << c.pattern << " on \"" << s << "\"";
    }
  }
}

TEST(StructuredMatcher, FormatsAcceptTypicalValues) {
  auto format = [](const char* name) { return compile_json_schema({{"type", "string"}, {"format", name}}); };
  EXPECT_TRUE(matches(format("date"), "\"2024-02-28\""));
  EXPECT_FALSE(matches(format("date"), "\"2024-02-30\""));
  EXPECT_FALSE(matches(format("date"), "\"2024-13-01\""));
  EXPECT_TRUE(matches(format("date-time"), "\"2024-05-01T23:59:59.123+02:00\""));
  EXPECT_TRUE(matches(format("date-time"), "\"2024-05-01T00:00:00Z\""));
  EXPECT_FALSE(matches(format("date-time"), "\"2024-05-01T24:00:00Z\""));
  EXPECT_TRUE(matches(format("uuid"), "\"123e4567-e89b-12d3-a456-426614174000\""));
  EXPECT_FALSE(matches(format("uuid"), "\"123e4567e89b12d3a456426614174000\""));
  EXPECT_TRUE(matches(format("email"), "\"jane.doe+x@mail.example.com\""));
  EXPECT_FALSE(matches(format("email"), "\"jane@localhost\""));
}

TEST(StructuredMatcher, LengthsCountCodePointsAndEscapes) {
  const auto grammar = compile_json_schema(json::parse(R"({"type": "string", "minLength": 2, "maxLength": 3})"));
  EXPECT_TRUE(matches(grammar, "\"\xc3\xa9\xc3\xa9\""));   // 2 code points, 4 bytes
  EXPECT_TRUE(matches(grammar, "\"\\n\\u0041b\""));        // 3 characters
  EXPECT_FALSE(matches(grammar, "\"\xf0\x9f\x98\x80\""));  // 1 code point
  EXPECT_FALSE(matches(grammar, "\"abcd\""));
}

}  // namespace
}  // namespace izwi::structured
