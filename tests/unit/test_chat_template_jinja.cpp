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
    {"quirk_0", R"J({% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(12121)J"},
    {"quirk_1",
     R"J({% for i in [1,2] %}{% for j in 'ab' %}{{ loop.index }}{{ i }}{{ j }}{% endfor %}{{ loop.index }}{% endfor %})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(11a21b112a22b2)J"},
    {"quirk_2", R"J({% if true %}{% set y = 5 %}{% endif %}{{ y }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(5)J"},
    {"quirk_3", R"J({% macro f() %}{{ z }}{% endmacro %}{% set z = 3 %}{{ f() }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(3)J"},
    {"quirk_4", R"J({% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = (3, 4) %}{{ c[0] }}{{ c }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(123(3, 4))J"},
    {"quirk_5", R"J({{ 'a' 'b' }}{{ "x\ty" }}{{ 'it\'s' }}{{ '\u00e9\x41' }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(abx	yit'séA)J"},
    {"quirk_6", R"J({{ 10 / 4 }}{{ 10 // 4 }}{{ -10 // 4 }}{{ 2 ** -1 }}{{ 5 % 3 }}{{ 5.5 % 2 }}{{ 1e3 }}{{ 1_000 }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(2.52-30.521.51000.01000)J"},
    {"quirk_7",
     R"J({{ [1,2,3] | sum }}{{ [1.5, 2] | sum }}{{ [3,1,2] | max }}{{ ['b','A','c'] | sort }}{{ ['b','A','c'] | sort(case_sensitive=true) }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(63.53['A', 'b', 'c']['A', 'b', 'c'])J"},
    {"quirk_8",
     R"J({{ 'Hello World' | wordcount }}{{ 'hello' | capitalize }}{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent(2, true) }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J",
     R"J(2Helloa
  b|  a
  b)J"},
    {"quirk_9", R"J({{ none | string }}{{ true | string }}{{ 1.0 | string }}{{ [none] | tojson }}{{ 'x' | list }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(NoneTrue1.0[null]['x'])J"},
    {"quirk_10",
     R"J({{ x is sequence }}{{ x is mapping }}{{ 1.0 is integer }}{{ true is number }}{{ none is defined }}{{ undefined_var is undefined }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(TrueFalseFalseTrueTrueTrue)J"},
    {"quirk_11",
     R"J({% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}{% endfor %})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(a2b1ba)J"},
    {"quirk_12", R"J({{ {'a': 1} == {'a': 1} }}{{ [1] == [1.0] }}{{ 'a' < 'b' }}{{ [1, 2] < [1, 3] }}{{ 1 == true }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(TrueTrueTrueTrueTrue)J"},
    {"quirk_13",
     R"J({% set ns = namespace(items=[]) %}{% set ns.items = ns.items + [1] %}{% set ns.items = ns.items + [2] %}{{ ns.items }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J([1, 2])J"},
    {"quirk_14", R"J({{ range(3) | list }}{{ range(1, 7, 2) | list }}{{ range(5, 0, -2) | list }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J([0, 1, 2][1, 3, 5][5, 3, 1])J"},
    {"quirk_15",
     R"J({{ 'abc'[5:] }}|{{ 'abc'[-10:2] }}|{{ [1,2,3][::-1] }}|{{ [1,2,3][1:-1] }}|{{ 'abcdef'[::-2] }}|{{ 'abcdef'[4:1:-1] }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(|ab|[3, 2, 1]|[2]|fdb|edc)J"},
    {"quirk_16", R"J({%- for m in msgs -%}
  {{ m }}
{%- endfor %})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(m1m2)J"},
    {"quirk_17", R"J(  {% for i in [1] %}
    x
  {% endfor %}  
  y)J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J",
     R"J(    x
  
  y)J"},
    {"quirk_18", R"J({% if a %}A{% elif b %}B{% else %}C{% endif %}{{ 'T' if a else 'F' }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(BF)J"},
    {"quirk_19",
     R"J({{ 'x' ~ undefined_thing ~ 'y' }}{{ undefined_thing | default('d', true) }}{{ '' | default('e', true) }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(xyde)J"},
    {"quirk_20",
     R"J({{ ' x '.strip() ~ '|' ~ 'a  b'.split(' ') | join(',') }}{{ 'a b c'.split(' ', 1) }}{{ 'a b c'.rsplit(' ', 1) }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(x|a,,b['a', 'b c']['a b', 'c'])J"},
    {"quirk_21", R"J({{ '%s' }}{{ 'a{b}c' }}{{ '{{' }}{{ '}}' }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(%sa{b}c{{}})J"},
    {"quirk_22",
     R"J({{ [1,2,3] | map('string') | join }}{{ [{'a':1},{'a':2}] | map(attribute='a') | list }}{{ ['a','B'] | map('upper') | list }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(123[1, 2]['A', 'B'])J"},
    {"quirk_23",
     R"J({{ ([1,2] | reverse | list) }}{{ 'abc' | reverse }}{{ [1,2,2,3] | unique | list }}{{ [[1,2],[3]] | map('length') | list }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J([2, 1]cba[1, 2, 3][2, 1])J"},
    {"quirk_25", R"J({% set s %}{% for i in range(2) %}{{ i }}{% endfor %}{% endset %}{{ s | length }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(2)J"},
    {"quirk_28", R"J({% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(37)J"},
    {"quirk_29", R"J({{ 'ab' * 2 }}{{ 2 * 'ab' }}{{ [1] * 2 if false else '' }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(abababab)J"},
    {"quirk_30",
     R"J({{ 0.1 * 3 }}{{ 1 / 3 }}{{ 2 / 2 }}{{ 100000000000000000.0 }}{{ 123456789.123456789 }}{{ -0.0 }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J",
     R"J(0.300000000000000040.33333333333333331.01e+17123456789.12345679-0.0)J"},
    {"quirk_31", R"J({{ {'a': 1}.get('b') }}{{ {'a': 1}.keys() | list }}{{ {'a': 1}.values() | list }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(None['a'][1])J"},
    {"quirk_32", R"J({{ 'abc' in ['abc'] }}{{ 1 in [1.0] }}{{ 'a' in {'a': 1} }}{{ 'bc' in 'abc' }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(TrueTrueTrueTrue)J"},
    {"quirk_33",
     R"J({{ 'Hello'.startswith(('x', 'H')) }}{{ 'Hello'.find('l') }}{{ 'Hello'.count('l') }}{{ 'hello world'.title() }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(True22Hello World)J"},
    {"quirk_34", R"J({% for x in [3, 1, 2] | sort(reverse=true) %}{{ x }}{{ loop.revindex0 }}{% endfor %})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(322110)J"},
    {"quirk_35", R"J({{ [1, 2, 3] | first }}{{ [1, 2, 3] | last }}{{ [] | first }}{{ 'abc' | first }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(13a)J"},
    {"quirk_36",
     R"J({{ ['a', 'b'] | join(', ') }}{{ [1, 2] | join }}{{ [{'n': 'x'}, {'n': 'y'}] | join('-', attribute='n') }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(a, b12x-y)J"},
    {"quirk_37",
     R"J({{ 3 | float }}{{ '3.5' | float }}{{ 'x' | int }}{{ 3.9 | int }}{{ '  7 ' | int }}{{ 2.5 | round }}{{ 3.14159 | round(2) }}{{ -2 | abs }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J", R"J(3.03.50372.03.142)J"},
    {"quirk_38", R"J({{ {'x': [1, {'y': 'é'}]} | tojson(indent=2) }}{{ 'é' | tojson(ensure_ascii=true) }})J",
     R"J({"x": [1], "a": false, "b": true, "msgs": ["m1", "m2"]})J",
     R"J({
  "x": [
    1,
    {
      "y": "é"
    }
  ]
}"\u00e9")J"},
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
