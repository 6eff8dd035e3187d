// Hostile nesting: the parser and the evaluator recurse, so each bounds its depth before it
// recurses (a 100,000-long `not not ...` or `x if c else x if c else ...` once overflowed the
// stack) and names the limit it hit.

#include "test_template_hostile.h"

namespace izwi {
namespace {

using hostile::error_of;
using hostile::mentions;
using hostile::render;
using hostile::repeat;

TEST(TemplateHostileRecursion, NotChainedAHundredThousandTimesIsAFormatError) {
  const Error e = error_of("{{ " + repeat("not ", 100000) + "x }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
  EXPECT_TRUE(mentions(e, "line 1: expressions nested too deeply (limit 100)"));
  EXPECT_EQ(render("{{ " + repeat("not ", 50) + "x }}"), "False");
}

TEST(TemplateHostileRecursion, ConditionalChainAHundredThousandLongIsAFormatError) {
  const Error e = error_of("{{ " + repeat("x if c else ", 100000) + "y }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
  EXPECT_TRUE(mentions(e, "expressions nested too deeply (limit 100)"));
  EXPECT_EQ(render("{{ " + repeat("x if c else ", 50) + "'y' }}"), "y");
}

TEST(TemplateHostileRecursion, DeepBracketsAndBlocksAreFormatErrors) {
  for (const std::string& bad :
       {"{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}",
        "{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}", "{{ " + repeat("-", 100000) + "1 }}",
        repeat("{% if true %}", 100000) + repeat("{% endif %}", 100000)}) {
    const Error e = error_of(bad);
    EXPECT_EQ(e.code(), ErrorCode::InvalidFormat) << e.what();
    EXPECT_TRUE(mentions(e, "nested too deeply (limit 100)"));
  }
}

TEST(TemplateHostileRecursion, EndlessMacroRecursionNamesTheLimit) {
  const Error e = error_of("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "render limit exceeded: macro calls nest too deeply (limit 200)"));
  EXPECT_EQ(render("{% macro m(n) %}{% if n > 0 %}{{ m(n - 1) }}{% else %}done{% endif %}{% endmacro %}{{ m(100) }}"),
            "done");
}

TEST(TemplateHostileRecursion, BlocksInsideRecursiveMacrosCountTowardTheEvaluatorDepth) {
  // 90 nested blocks per call, 200 calls deep would be 18,000 levels of C++ recursion.
  const std::string body = repeat("{% if true %}", 90) + "{{ m() }}" + repeat("{% endif %}", 90);
  const Error e = error_of("{% macro m() %}" + body + "{% endmacro %}{{ m() }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "render limit exceeded: expressions, blocks and macro calls nest too deeply (limit 800)"));
}

}  // namespace
}  // namespace izwi
