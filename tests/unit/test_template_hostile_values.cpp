// Hostile values: a namespace that holds itself (printed as Python prints a recursive container),
// values nested past kMaxValueDepth by a loop or by the request's JSON, and macros called after
// the scope they were defined in has ended. Each once crashed (SIGSEGV) or leaked.

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

TEST(TemplateHostileValues, MacroAndCallerOutliveTheirBlock) {
  // Called through a namespace after the loop that defined them ended: their scope is kept alive
  // (it once was freed memory).
  EXPECT_EQ(render("{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}"
                   "{% set ns.m = m %}{% endfor %}{{ ns.m() }}"),
            "1");
  EXPECT_EQ(render("{% set ns = namespace() %}{% macro k() %}{% set ns.c = caller %}{% endmacro %}"
                   "{% for i in [2] %}{% call k() %}{{ i }}{% endcall %}{% endfor %}{{ ns.c() }}"),
            "2");
}

}  // namespace
}  // namespace izwi
