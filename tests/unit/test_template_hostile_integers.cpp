// Hostile integers: Python's ints do not overflow, int64 does. A result that does not fit is a
// typed error, never a wrapped value (9223372036854775807 + 1, 2 ** 100) or a trap
// (INT64_MIN // -1 raised SIGFPE); a literal that does not fit is a syntax error (a bare
// std::stoll once threw out of the template's loading, and the whole model folder failed).

#include "test_template_hostile.h"

namespace izwi {
namespace {

using hostile::error_of;
using hostile::mentions;
using hostile::render;

constexpr const char* kMin = "(-9223372036854775807 - 1)";

TEST(TemplateHostileIntegers, MinDividedByMinusOne) {
  const Error e = error_of(std::string("{{ ") + kMin + " // -1 }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "line 1: integer overflow: -9223372036854775808 // -1 does not fit in 64 bits"));
  EXPECT_EQ(render(std::string("{{ ") + kMin + " is divisibleby(-1) }}|{{ " + kMin +
                   " % -1 }}|{{ 7 // -1 }}|{{ -7 % -1 }}|{{ -7 // 2 }}|{{ 7 % -3 }}"),
            "True|0|-7|0|-4|-2");
}

TEST(TemplateHostileIntegers, OverflowIsATypedErrorNeverAWrappedValue) {
  for (const std::string& bad :
       {std::string("{{ 9223372036854775807 + 1 }}"), std::string("{{ 2 ** 100 }}"), std::string("{{ 3 ** 40 }}"),
        std::string("{{ ") + kMin + " - 1 }}", std::string("{{ 4294967296 * 4294967296 }}"),
        std::string("{{ -") + kMin + " }}", std::string("{{ ") + kMin + " | abs }}",
        std::string("{{ [9223372036854775807, 1] | sum }}")}) {
    const Error e = error_of(bad);
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << bad;
    EXPECT_TRUE(mentions(e, "integer overflow")) << bad;
  }
  EXPECT_EQ(
      render("{{ (-2) ** 63 }}|{{ 2 ** 62 }}|{{ 9223372036854775806 + 1 }}|{{ 2 ** -1 }}|{{ (-1) ** 99999999999 }}"),
      "-9223372036854775808|4611686018427387904|9223372036854775807|0.5|-1");
}

TEST(TemplateHostileIntegers, FloatToIntThatDoesNotFitIsATypedError) {
  EXPECT_TRUE(mentions(error_of("{{ 1e300 | int }}"), "cannot convert float 1e+300 to a 64-bit integer"));
  EXPECT_TRUE(mentions(error_of("{{ '1e300' | int }}"), "cannot convert float"));
  EXPECT_EQ(render("{{ 'nan' | float | int(5) }}|{{ '42.9' | int }}|{{ 'x' | int(7) }}|{{ -2.5 | int }}"), "5|42|7|-2");
}

TEST(TemplateHostileIntegers, LiteralsThatDoNotFitAreFormatErrorsNotExceptions) {
  for (const char* bad : {"{{ 99999999999999999999 }}", "{{ messages.99999999999999999999 }}"}) {
    try {
      jinja::ChatTemplate(bad, "model/chat_template.jinja");
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {  // a typed error: the tokenizer keeps the folder and reports it on use
      EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
      EXPECT_TRUE(mentions(e, "line 1: integer literal does not fit in 64 bits: 99999999999999999999"));
    }
  }
  // An attribute path of digits past 64 bits is an index past any sequence.
  EXPECT_EQ(render("{{ ([[1]] | map(attribute='99999999999999999999') | first) is defined }}"), "False");
}

TEST(TemplateHostileIntegers, RangesAndSlicesAtTheEdgesOfInt64) {
  EXPECT_EQ(render("{% for i in range(9223372036854775806, 9223372036854775807, 3) %}{{ i }}{% endfor %}"),
            "9223372036854775806");
  EXPECT_EQ(render("{{ range(-9223372036854775807 - 1, 9223372036854775807, 9223372036854775807) | list }}"),
            "[-9223372036854775808, -1, 9223372036854775806]");
  EXPECT_EQ(render(std::string("{{ 'abc'[") + kMin + ":] }}|{{ [1, 2][::" + kMin + "] }}|{{ 'abc'[::-2] }}"),
            "abc|[2]|ca");
}

}  // namespace
}  // namespace izwi
