// Hostile values: a namespace that holds itself (printed as Python prints a recursive container),
// values nested past kMaxValueDepth by a loop or by the request's JSON, and macros called after
// the scope they were defined in has ended. Each once crashed (SIGSEGV) or leaked.

#include <sys/resource.h>

#include "test_template_hostile.h"

namespace izwi {
namespace {

using hostile::error_of;
using hostile::mentions;
using hostile::render;
using nlohmann::ordered_json;

TEST(TemplateHostileValues, NamespaceHoldingItselfPrintsLikeJinja) {
  // Jinja2 3.1's renderings: Python's repr of a recursive dict is {...}, of a list [...].
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.self = ns %}{{ ns }}"),
            "<Namespace {'self': <Namespace {...}>}>");
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.l = [ns, 2] %}{{ ns }}|{{ ns.l | string }}|"
                   "{{ ns.l | join(',') }}"),
            "<Namespace {'a': 1, 'l': [<Namespace {...}>, 2]}>|[<Namespace {'a': 1, 'l': [...]}>, 2]|"
            "<Namespace {'a': 1, 'l': [<Namespace {...}>, 2]}>,2");
}

TEST(TemplateHostileValues, NamespaceHoldingItselfCanBeFilteredAndCompared) {
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.l = [ns, 2] %}{{ ns == ns }}{{ [ns] == [ns] }}"
                   "{{ ns.l | unique | list | length }}{{ ns.l | map('string') | list | length }}"),
            "TrueTrue22");
  const Error e = error_of("{% set ns = namespace() %}{% set ns.l = [ns] %}{{ ns.l | tojson }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "not JSON serializable"));
}

TEST(TemplateHostileValues, ChainOfNamespacesTooDeepToPrintIsALimitError) {
  const Error e = error_of(
      "{% set ns = namespace(x=none) %}{% for i in range(100000) %}{% set ns.x = namespace(next=ns.x) %}"
      "{% endfor %}{{ ns.x }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "line 1: render limit exceeded: a value is nested too deeply (limit 200)"));
  // Destroying the chain (100,000 namespaces) does not recurse either: it got here.
}

TEST(TemplateHostileValues, ListsNestedPastTheDepthLimitAreALimitError) {
  const Error e = error_of(
      "{% set ns = namespace(x=none) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}");
  EXPECT_TRUE(mentions(e, "render limit exceeded: a value is nested too deeply (limit 200)"));
  // A bound method holds its dict: a chain of them nests as deep.
  EXPECT_TRUE(mentions(error_of("{% set ns = namespace(x={}) %}{% for i in range(100000) %}"
                                "{% set ns.x = {'g': ns.x.get} %}{% endfor %}"),
                       "a value is nested too deeply"));
  // 199 levels are fine.
  EXPECT_EQ(render("{% set ns = namespace(x=1) %}{% for i in range(199) %}{% set ns.x = [ns.x] %}{% endfor %}"
                   "{{ ns.x | string | length }}"),
            std::to_string(199 * 2 + 1));
}

TEST(TemplateHostileValues, JsonInputNestedTooDeeplyIsATypedError) {
  ordered_json deep = ordered_json::array();
  for (int i = 0; i < 5000; ++i) deep = ordered_json::array({std::move(deep)});
  const Error e = error_of("{{ x | length }}", {{"x", deep}});
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "chat template 'hostile.jinja' inputs: render limit exceeded: a value is nested too deeply"));
}

TEST(TemplateHostileValues, MacroAndCallerCalledAfterTheirBlockEndedAreTypedErrors) {
  // Called through a namespace after the loop that defined them ended (their scope was once freed
  // memory, then kept alive: a macro defined in a long loop pinned gigabytes). Jinja2 no longer
  // sees the loop's variables there either (it prints its internal 'missing').
  const Error e = error_of(
      "{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}"
      "{% set ns.m = m %}{% endfor %}\n{{ ns.m() }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(mentions(e, "line 2: 'm' was called after the block that defined it ended"));
  EXPECT_TRUE(mentions(error_of("{% set ns = namespace() %}{% macro k() %}{% set ns.c = caller %}{% endmacro %}"
                                "{% for i in [2] %}{% call k() %}{{ i }}{% endcall %}{% endfor %}{{ ns.c() }}"),
                       "'caller' was called after the block that defined it ended"));
  // Within their block, or defined at the top, they work wherever they are stored.
  EXPECT_EQ(render("{% set ns = namespace() %}{% macro m() %}top{% endmacro %}{% for i in [1] %}"
                   "{% macro n() %}{{ i }}{% endmacro %}{% set ns.n = n %}{{ ns.n() }}{% set ns.m = m %}{% endfor %}"
                   "{{ ns.m() }}"),
            "1top");
}

// The process's peak resident memory so far, in kB.
long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(TemplateHostileValues, MacrosDefinedInALongLoopPinNoMemory) {
  // Some 500,000 scopes, each with a macro: none outlives its iteration (kept, they took 1.6 GB).
  const long before = peak_rss_kb();
  EXPECT_TRUE(mentions(error_of("{% for j in range(100) %}{% for i in range(100000) %}{% macro m() %}x{% endmacro %}"
                                "{% endfor %}{% endfor %}"),
                       "the template takes too many steps"));
  EXPECT_LT(peak_rss_kb() - before, 512 * 1024);
}

}  // namespace
}  // namespace izwi
