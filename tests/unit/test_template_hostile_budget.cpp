// Hostile work: one render draws from one budget of steps and bytes (template/limits.h), so
// templates that once ran for hours (exponential macros, values whose children are shared, an
// O(n^2) unique) or grew to gigabytes (a size check that overflowed, indent, tojson, batch,
// replace, join, list copies) end in a typed error naming the limit; and real conversations,
// even large ones, stay far inside it.

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "template/limits.h"
#include "test_template_hostile.h"

namespace izwi {
namespace {

using hostile::error_of;
using hostile::mentions;
using hostile::render;
using hostile::repeat;
using nlohmann::ordered_json;

constexpr const char* kTooManySteps = "render limit exceeded: the template takes too many steps (limit 20000000)";
constexpr const char* kStringTooLong = "render limit exceeded: a string is too long (limit 33554432)";
constexpr const char* kTooManyItems = "render limit exceeded: a list or dict has too many items (limit 1048576)";
constexpr const char* kTooManyBytes =
    "render limit exceeded: the template builds too many bytes of strings and lists (limit 268435456)";

// A value of 2^80 paths: each level's list holds the level below twice.
const std::string kShared =
    "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(80) %}{% set ns.a = [ns.a, ns.a] %}"
    "{% set ns.b = [ns.b, ns.b] %}{% endfor %}";

// The fuzz target's lower step limit holds on its thread while it lives, and no higher one exists.
TEST(TemplateHostileBudget, AThreadsRenderStepLimitStopsItsRendersSooner) {
  const std::string loop = "{% for i in range(100000) %}{{ i }}{% endfor %}";
  EXPECT_EQ(render(loop).size(), 488890u);
  {
    const jinja::RenderStepLimit limit(1000);
    EXPECT_TRUE(mentions(error_of(loop), "the template takes too many steps (limit 1000)"));
    std::thread([&] { EXPECT_EQ(render(loop).size(), 488890u); }).join();  // other threads keep theirs
  }
  EXPECT_EQ(render(loop).size(), 488890u);
  EXPECT_THROW(jinja::RenderStepLimit(jinja::kMaxRenderSteps + 1), std::invalid_argument);
}

TEST(TemplateHostileBudget, ExponentialMacroRunsOutOfSteps) {
  const Error e =
      error_of("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, kTooManySteps));
}

TEST(TemplateHostileBudget, LoopsRunOutOfSteps) {
  EXPECT_TRUE(mentions(error_of("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"),
                       kTooManySteps));
}

TEST(TemplateHostileBudget, ValuesSharingChildrenRunOutOfSteps) {
  EXPECT_TRUE(mentions(error_of(kShared + "{{ ns.a == ns.b }}"), kTooManySteps));
  EXPECT_TRUE(mentions(error_of(kShared + "{{ ns.a }}"), "render limit exceeded"));
  EXPECT_TRUE(mentions(error_of(kShared + "{{ ns.a | tojson }}"), "render limit exceeded"));
  // A value equals itself without a walk (Python's identity shortcut).
  EXPECT_EQ(render(kShared + "{{ ns.a == ns.a }}"), "True");
}

TEST(TemplateHostileBudget, ComparingLongStringsCostsByTheirLength) {
  // 65,536 items, 16 distinct texts of 1 MB that differ only at the end: sorting (or hashing for
  // unique) reads 1 MB per comparison, a million times.
  const std::string items =
      "{% set s = 'a' * 1000000 %}{% set ns = namespace(l=[]) %}{% for i in range(16) %}"
      "{% set ns.l = ns.l + [s ~ i] %}{% endfor %}{% for i in range(12) %}{% set ns.l = ns.l + ns.l %}{% endfor %}";
  EXPECT_TRUE(mentions(error_of(items + "{{ ns.l | sort | length }}"), kTooManySteps));
  EXPECT_TRUE(mentions(error_of(items + "{{ ns.l | unique | list | length }}"), kTooManySteps));
  // One text shared by several values compares without a scan.
  EXPECT_EQ(render("{% set s = 'a' * 1000000 %}{{ [s, s, s] | sort | length }}{{ s == s }}"), "3True");
}

TEST(TemplateHostileBudget, SubstringSearchIsLinear) {
  // A search comparing the needle at every position took 10^11 steps here (minutes).
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(render("{% set s = 'a' * 2000000 %}{% set t = 'a' * 100000 ~ 'b' %}{{ t in s }} {{ s.find(t) }} "
                   "{{ s.rfind(t) }} {{ s.count(t) }} {{ s.split(t) | length }} {{ s.rsplit(t) | length }} "
                   "{{ s.replace(t, '') | length }} {{ s.strip(t) | length }} {{ s | replace(t, '') | length }}"),
            "False -1 -1 0 1 1 2000000 0 2000000");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(
      render("{{ 'aaa'.rsplit('aa') }}{{ 'a,b,c'.rsplit(',', 1) }}{{ 'abc'.rfind('') }}{{ 'abcabc'.rfind('bc') }}"),
      "['a', '']['a,b', 'c']34");
}

TEST(TemplateHostileBudget, UniqueIsLinear) {
  // 800,000 items, 100,000 distinct: a set lookup per item (a scan of those seen was 10^11 steps).
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(render("{% set ns = namespace(l=range(100000) | list) %}{% for i in range(3) %}"
                   "{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | unique | list | length }}"),
            "100000");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(render("{{ [1, 2, 2, 1.0, true, 'a', ('a',), ('a',)] | unique | list }}"), "[1, 2, 'a', ('a',)]");
  EXPECT_TRUE(mentions(error_of("{{ [[1], [1]] | unique | list }}"), "unhashable type: 'list'"));
}

TEST(TemplateHostileBudget, ParseTimeIsLinear) {
  // 80,000 statements without a comment: searching the rest of the text for "{#" at every tag made
  // this quadratic (40,000 took 30 s).
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(render(repeat("{% set x = 1 %}\n", 80000) + "{{ x }}"), "1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(TemplateHostileBudget, StringRepetitionIsBoundedWithoutOverflow) {
  // 2 * 2^62 bytes wrapped the old size check to 0.
  EXPECT_TRUE(mentions(error_of("{{ 'ab' * 4611686018427387904 }}"), kStringTooLong));
  EXPECT_TRUE(mentions(error_of("{{ 'a' * 9223372036854775807 }}"), kStringTooLong));
  EXPECT_EQ(render("{{ '' * 9223372036854775807 }}|{{ 'ab' * -3 }}|{{ 3 * 'ab' }}"), "||ababab");
}

TEST(TemplateHostileBudget, FiltersThatGrowTextAreBounded) {
  for (const char* bad : {
           "{{ 'a\nb' | indent(10000000000) }}",
           "{{ [[1]] | tojson(indent=10000000000) }}",
           "{% set s = 'a' * 1000000 %}{{ s.replace('a', s) | length }}",
           "{% set s = 'a' * 1000000 %}{{ s | replace('a', s) | length }}",
           "{% set s = 'a' * 10000000 %}{{ [s, s, s, s, s] | join(s) | length }}",
           "{% set s = 'a' * 10000000 %}{{ s.join([s, s, s, s, s]) | length }}",
           "{% set s = '&' * 10000000 %}{{ s | escape | length }}",
           "{% set s = '\\x01' * 10000000 %}{{ s | tojson | length }}",
           "{% set s = '\u00e9' * 10000000 %}{{ s | tojson(ensure_ascii=true) | length }}",
       }) {
    const Error e = error_of(bad);
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(mentions(e, kStringTooLong)) << bad;
  }
  EXPECT_EQ(render("{{ 'a\nb' | indent(2) }}|{{ [1] | tojson(indent=1) }}"), "a\n  b|[\n 1\n]");
}

TEST(TemplateHostileBudget, LiteralLongerThanAStringMayBeIsAFormatError) {
  try {
    jinja::ChatTemplate("{{ '" + std::string(jinja::kMaxStringBytes + 1, 'a') + "' }}", "big.jinja");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
    EXPECT_TRUE(mentions(e, std::string("chat template 'big.jinja': ") + kStringTooLong));
  }
}

TEST(TemplateHostileBudget, ListsAreBounded) {
  EXPECT_TRUE(mentions(error_of("{{ [1] | batch(10000000000, fill_with=0) | list | length }}"), kTooManyItems));
  EXPECT_TRUE(mentions(error_of("{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}"
                                "{% endfor %}{{ ns.l | length }}"),
                       kTooManyItems));
  EXPECT_TRUE(mentions(error_of("{{ range(1000000000) | list }}"), "range() has too many items (limit 100000)"));
  EXPECT_EQ(render("{{ [1, 2, 3] | batch(2, fill_with=0) | list }}"), "[[1, 2], [3, 0]]");
}

TEST(TemplateHostileBudget, BytesBuiltInAllAreBounded) {
  // Each list fits, but 100 of 200,000 items do not.
  EXPECT_TRUE(mentions(error_of("{% set big = range(100000) | list %}{% set ns = namespace(l=[]) %}"
                                "{% for i in range(100) %}{% set ns.l = ns.l + [big + big] %}{% endfor %}"),
                       kTooManyBytes));
  // Each string fits, but 1,000 of 30 MB do not: building (and reading) text costs by its length.
  EXPECT_TRUE(mentions(error_of("{% set ns = namespace(l=[]) %}{% set s = 'a' * 30000000 %}{% for i in range(1000) %}"
                                "{% set ns.l = ns.l + [s ~ i] %}{% endfor %}{{ ns.l | length }}"),
                       kTooManySteps));
  EXPECT_TRUE(mentions(error_of("{% set s = 'a' * 30000000 %}{% for i in range(100000) %}{{ s[0] }}{% endfor %}"),
                       kTooManySteps));
}

TEST(TemplateHostileBudget, OutputIsBounded) {
  const Error e = error_of("{% set s = 'a' * 1000 %}{% for i in range(100000) %}{{ s }}{% endfor %}");
  EXPECT_TRUE(mentions(e, kStringTooLong));
}

TEST(TemplateHostileBudget, LargeRealConversationRendersWithinTheLimits) {
  std::ifstream file(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/Qwen-Qwen3-0.6B.jinja");
  std::stringstream text;
  text << file.rdbuf();
  ASSERT_FALSE(text.str().empty());
  jinja::ChatTemplateInputs in;
  const std::string content = repeat("All work and no play makes Jack a dull boy. ", 100);  // 4.4 kB
  for (int i = 0; i < 2000; ++i) {
    in.messages.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", content + std::to_string(i)}});
  }
  const std::string prompt = jinja::ChatTemplate(text.str(), "Qwen3.jinja").render(in);
  EXPECT_GT(prompt.size(), 2000 * content.size());
  EXPECT_NE(prompt.find(content + "1999"), std::string::npos);
}

}  // namespace
}  // namespace izwi
