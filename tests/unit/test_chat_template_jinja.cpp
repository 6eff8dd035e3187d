// The Jinja interpreter's pieces (src/template): whitespace control with transformers' settings,
// expressions, filters, tests, loops, scoping, macros; and its errors, typed and naming the
// template and line. The expected strings are Jinja2 3.1's renderings of the same sources
// (ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True), loopcontrols).

#include <gtest/gtest.h>

#include <ctime>

#include "izwi/errors.h"
#include "template/chat_template.h"
#include "template/value.h"

namespace izwi {
namespace {

using nlohmann::ordered_json;

std::string render(const std::string& source, const ordered_json& context = ordered_json::object(),
                   const std::string& name = "test.jinja") {
  jinja::ChatTemplateInputs in;
  in.messages = context.contains("messages") ? context["messages"] : ordered_json::array();
  ordered_json kwargs = context;
  kwargs.erase("messages");
  in.kwargs = kwargs;
  return jinja::ChatTemplate(source, name).render(in);
}

struct Case {
  const char* name;
  const char* source;
  const char* context;
  const char* expected;
};

const Case kCases[] = {
    {"trim_and_lstrip_blocks", R"J(a
  {% if true %}
    b
  {% endif %}
c
)J",
     R"J({})J",
     R"J(a
    b
c)J"},
    {"minus_and_plus_markers", R"J(x  {%- if true -%}  y  {%- endif %}
  {%+ if true %}z{% endif %}
{{ 'v' }}
)J",
     R"J({})J", R"J(xy  zv)J"},
    {"comments_are_stripped", R"J(a
  {# note #}
b {#- tight -#} c)J",
     R"J({})J",
     R"J(a
bc)J"},
    {"arithmetic",
     R"J({{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2 * 3 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1.5e-7 }} {{ 3.0 }})J",
     R"J({})J", R"J(3 -4 -2 3.5 1024 7 0.30000000000000004 1e+20 1.5e-07 3.0)J"},
    {"string_methods",
     R"J({{ '  a b  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'Hello'.upper() }}{{ 'Hello'.lower() }}|{{ 'x\ny'.splitlines() }}|{{ 'a-b'.title() }})J",
     R"J({})J", R"J(a b|hi|['a', 'b', '', 'c']|['a', 'b']|True|True|bba|HELLOhello|['x', 'y']|A-B)J"},
    {"slicing",
     R"J({{ 'héllo'[1:3] }}|{{ 'héllo'[::-1] }}|{{ [1, 2, 3, 4][-2:] }}|{{ [1, 2, 3, 4][::2] }}|{{ 'abc'[-1] }}|{{ messages[1:] | length }})J",
     R"J({"messages": [{"role": "user"}, {"role": "assistant"}]})J", R"J(él|olléh|[3, 4]|[1, 3]|c|1)J"},
    {"filters",
     R"J({{ names | join(', ') }}|{{ names | length }}|{{ '  pad ' | trim }}|{{ missing | default('dflt') }}|{{ items | selectattr('ok') | map(attribute='n') | list }}|{{ items | rejectattr('ok') | map(attribute='n') | join }}|{{ names | first }}{{ names | last }}|{{ [3, 1, 2] | sort }}|{{ 'abc' | upper }}|{{ d | dictsort }}|{{ d | items | list }}|{{ [1, 2, 2] | unique | list }}|{{ '5' | int + 1 }}|{{ names | reverse | list }})J",
     R"J({"names": ["ann", "bob"], "items": [{"n": 1, "ok": true}, {"n": 2, "ok": false}], "d": {"b": 1, "a": 2}})J",
     R"J(ann, bob|2|pad|dflt|[1]|2|annbob|[1, 2, 3]|ABC|[('a', 2), ('b', 1)]|[('b', 1), ('a', 2)]|[1, 2]|6|['bob', 'ann'])J"},
    {"tojson", R"J({{ v | tojson }}
{{ v | tojson(indent=2) }}
{{ 'é"\n' | tojson }}
{{ v | tojson(sort_keys=true) }})J",
     R"J({"v": {"z": [1, 2.5, null, true], "a": {}, "s": "ü"}})J",
     R"J({"z": [1, 2.5, null, true], "a": {}, "s": "ü"}
{
  "z": [
    1,
    2.5,
    null,
    true
  ],
  "a": {},
  "s": "ü"
}
"é\"\n"
{"a": {}, "s": "ü", "z": [1, 2.5, null, true]})J"},
    {"tests",
     R"J({{ x is defined }}{{ y is defined }}{{ none is none }}{{ 's' is string }}{{ d is mapping }}{{ [1] is iterable }}{{ 3 is odd }}{{ 4 is divisibleby 2 }}{{ 1 is number }}{{ 'a' is in 'cat' }}{{ x is not none }}{{ 2 is equalto 2 }})J",
     R"J({"x": 1, "d": {}})J", R"J(TrueFalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue)J"},
    {"loop_variables",
     R"J({% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.cycle('a', 'b') }};{% endfor %})J",
     R"J({"xs": ["p", "q", "r"]})J", R"J(103TrueFalse3a;212FalseFalse3pb;321FalseTrue3qa;)J"},
    {"loop_filter_else_and_controls",
     R"J({% for x in range(10) if x % 2 == 0 %}{% if x == 6 %}{% break %}{% endif %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}/{{ loop.length }} {% endfor %}|{% for x in [] %}no{% else %}empty{% endfor %})J",
     R"J({})J", R"J(0/5 4/5 |empty)J"},
    {"scoping_and_namespace",
     R"J({% set a = 1 %}{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set a = a + i %}{% set ns.n = ns.n + i %}{% endfor %}{{ a }} {{ ns.n }})J",
     R"J({})J", R"J(1 6)J"},
    {"macros_and_call",
     R"J({% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', punct='?') }}{% macro wrap() %}[{{ caller() }}]{% endmacro %} {% call wrap() %}inside{% endcall %})J",
     R"J({})J", R"J(Hi Ann! Hi Bob? [inside])J"},
    {"dicts_and_membership",
     R"J({% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ 'a' in d }}{{ 'z' not in d }}{{ d.get('a') }}{{ d.get('z', 'none') }}{{ d['b'] }}{{ d.b }}{% for k in d %}{{ k }}{% endfor %})J",
     R"J({"d": {"a": 1, "b": "two"}})J", R"J(a=1;b=two;TrueTrue1nonetwotwoab)J"},
    {"conditional_and_logic",
     R"J({{ 'y' if x else 'n' }}{{ 'y' if not x else 'n' }}{{ x and 'and' }}{{ none or 'or' }}{{ [] or 'empty' }}{{ 1 < 2 }}{{ 'b' >= 'a' }}{{ (1, 2) }}{{ [1, 'a', none, true, 1.0] }}{{ {'k': 'v'} }})J",
     R"J({"x": true})J", R"J(ynandoremptyTrueTrue(1, 2)[1, 'a', None, True, 1.0]{'k': 'v'})J"},
    {"set_block_and_filter_block",
     R"J({% set t %}  inner {{ 1 }}  {% endset %}[{{ t }}]{% filter upper %}shout{% endfilter %})J", R"J({})J",
     R"J([  inner 1  ]SHOUT)J"},
    {"string_concat_and_tilde", R"J({{ 'a' ~ 1 ~ none }}{{ 'x' * 3 }}{{ [1] + [2] }})J", R"J({})J",
     R"J(a1Nonexxx[1, 2])J"},
    {"raw_block", R"J({% raw %}{{ not rendered }}{% endraw %})J", R"J({})J", R"J({{ not rendered }})J"},
};

TEST(ChatTemplateJinja, RendersLikeJinja2) {
  for (const Case& c : kCases) {
    EXPECT_EQ(render(c.source, ordered_json::parse(c.context)), c.expected) << c.name;
  }
}

TEST(ChatTemplateJinja, ContextHasTransformersVariables) {
  jinja::ChatTemplateInputs in;
  in.messages = ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  in.kwargs = {{"enable_thinking", false}};
  in.add_generation_prompt = false;
  const jinja::ChatTemplate t(
      "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}|{{ tools is none }}|{{ documents is none }}|"
      "{{ add_generation_prompt }}|{{ enable_thinking }}|{{ unknown is defined }}",
      "ctx");
  EXPECT_EQ(t.render(in), "<s>hi</s>|True|True|False|False|False");
  in.tools = ordered_json::parse(R"([{"name": "f"}])");
  EXPECT_EQ(jinja::ChatTemplate("{{ tools[0].name }}", "t").render(in), "f");
}

TEST(ChatTemplateJinja, StrftimeNowIsLocalTime) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char year[8];
  std::strftime(year, sizeof year, "%Y", &local);
  EXPECT_EQ(render("{{ strftime_now('%Y') }}"), year);
}

TEST(ChatTemplateJinja, FloatReprIsPythons) {
  EXPECT_EQ(jinja::float_repr(0.1), "0.1");
  EXPECT_EQ(jinja::float_repr(1e16), "1e+16");
  EXPECT_EQ(jinja::float_repr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(jinja::float_repr(0.0001), "0.0001");
  EXPECT_EQ(jinja::float_repr(0.00001), "1e-05");
  EXPECT_EQ(jinja::float_repr(-2.5), "-2.5");
}

// The typed error a render raises.
Error error_of(const std::string& source, const ordered_json& context = ordered_json::object()) {
  try {
    render(source, context, "model/chat_template.jinja");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << source;
  return Error(ErrorCode::Internal, "");
}

TEST(ChatTemplateJinja, UnknownFilterIsAFormatErrorWithTheLine) {
  const Error e = error_of("line one\n{{ x | no_such_filter }}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
  EXPECT_STREQ(e.what(), "chat template 'model/chat_template.jinja' line 2: no filter named 'no_such_filter'");
  EXPECT_EQ(error_of("{% if x is no_such_test %}{% endif %}").code(), ErrorCode::InvalidFormat);
}

TEST(ChatTemplateJinja, UnclosedBlockIsAFormatError) {
  const Error e = error_of("{% for m in messages %}\n{{ m }}\n");
  EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
  EXPECT_NE(std::string(e.what()).find("chat template 'model/chat_template.jinja' line "), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("'endfor'"), std::string::npos) << e.what();
  for (const char* bad : {"{{ x ", "{% if %}{% endif %}", "{% endif %}", "{{ 'unterminated }}", "{# no end",
                          "{% unknown_tag %}", "{{ (1, }}", "{{ a.  }}"}) {
    EXPECT_EQ(error_of(bad).code(), ErrorCode::InvalidFormat) << bad;
  }
}

TEST(ChatTemplateJinja, RaiseExceptionIsATypedErrorNamingTemplateAndLine) {
  const Error e = error_of("{% if messages | length == 0 %}\n\n  {{ raise_exception('No messages!') }}\n{% endif %}");
  EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(e.what(), "chat template 'model/chat_template.jinja' line 3: raise_exception: No messages!");
}

TEST(ChatTemplateJinja, RuntimeFailuresAreTypedErrors) {
  EXPECT_EQ(error_of("{{ 'a' + missing }}").code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("{{ 1 + 'a' }}").code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("{{ missing.attr }}").code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("{{ 1 // 0 }}").code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}").code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of("{% set x.y = 1 %}").code(), ErrorCode::InvalidArgument);
  const Error e = error_of("\n\n{{ messages[0].content + 1 }}", {{"messages", {{{"content", "x"}}}}});
  EXPECT_NE(std::string(e.what()).find("line 3:"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace izwi
