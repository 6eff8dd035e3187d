// Fuzz target: chat templates (src/template: lexer, parser, interpreter, render limits). Each input
// is tried three ways: (1) its bytes as template text (the corpus holds the 29 real templates of
// tests/data/chat_templates and hostile ones); (2) its bytes as the choices of a small Jinja grammar
// (statements, expressions, filters, tests, edge-case literals), so mutations make templates that
// parse and run instead of syntax errors; (3) the same grammar splicing in runs of tag-delimited
// fragments of the real templates. Each template is parsed and rendered with a small conversation,
// tools and keyword arguments. Each step succeeds or raises izwi::Error; a crash, a hang past the
// render limits or a sanitizer report is a bug.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "izwi/errors.h"
#include "template/chat_template.h"
#include "template/limits.h"

namespace {

using nlohmann::ordered_json;

// The real templates cut before each "{{" / "{%": splicing runs of these keeps tags whole.
std::vector<std::vector<std::string>> load_fragments() {
  std::vector<std::vector<std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates")) {
    if (entry.path().extension() != ".jinja") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    std::vector<std::string> pieces;
    size_t begin = 0;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] == '{' && (s[i + 1] == '{' || s[i + 1] == '%')) {
        pieces.push_back(s.substr(begin, i - begin));
        begin = i;
      }
    }
    pieces.push_back(s.substr(begin));
    out.push_back(std::move(pieces));
  }
  if (out.empty()) std::abort();  // the fixture itself is wrong
  return out;
}

// Writes a template from the bytes: each byte picks a production; once they run out every choice is
// 0, the simplest one, so generation always ends.
class Grammar {
 public:
  Grammar(izwi::fuzz::Bytes& in, const std::vector<std::vector<std::string>>* fragments)
      : in_(in), fragments_(fragments) {}

  std::string body(int depth) {
    std::string out;
    const int n = in_.byte() % 5;
    for (int i = 0; i < n; ++i) out += statement(depth);
    return out;
  }

 private:
  template <size_t N>
  const char* pick(const char* const (&options)[N]) {
    return options[in_.byte() % N];
  }
  std::string open(const char* tag) { return pick(kOpen) + std::string(" ") + tag + " "; }
  std::string close() { return std::string(" ") + pick(kClose); }

  std::string statement(int depth) {
    if (depth > 6) return "t";
    switch (in_.byte() % 16) {
      case 0:
        return pick(kTexts);
      case 1:
      case 2:
        return "{{ " + expr(depth + 1) + " }}";
      case 3:
        return open("if") + expr(depth + 1) + close() + body(depth + 1) + open("elif") + expr(depth + 1) + close() +
               body(depth + 1) + open("else") + close() + body(depth + 1) + open("endif") + close();
      case 4:
        return open("for") + pick(kTargets) + " in " + expr(depth + 1) + (in_.flag() ? " if " + expr(depth + 1) : "") +
               close() + body(depth + 1) + (in_.flag() ? "{% break %}" : "{% continue %}") + open("else") + close() +
               body(depth + 1) + open("endfor") + close();
      case 5:
        return open("set") + pick(kNames) + " = " + expr(depth + 1) + close();
      case 6:
        return "{% set ns = namespace(a=" + expr(depth + 1) + ") %}{% set ns." + pick(kAttributes) + " = " +
               expr(depth + 1) + " %}";
      case 7:
        return open("macro") + "m(a, b=" + expr(depth + 1) + ")" + close() + body(depth + 1) + "{{ m(a) }}" +
               open("endmacro") + close();
      case 8:
        return open("call") + "m(" + expr(depth + 1) + ")" + close() + body(depth + 1) + "{{ caller() }}" +
               open("endcall") + close();
      case 9:
        return open("filter") + pick(kFilters) + close() + body(depth + 1) + open("endfilter") + close();
      case 10:
        return open("set") + pick(kNames) + close() + body(depth + 1) + open("endset") + close();
      case 11:
        return "{% raw %}" + std::string(pick(kTexts)) + "{{ x }}{% endraw %}{# " + pick(kTexts) + " #}";
      case 12:
        return splice();
      default:
        return "{{ " + expr(depth + 1) + " }}";
    }
  }

  // A run of fragments of one real template (often unbalanced: a syntax error, or a deep prefix).
  std::string splice() {
    if (!fragments_) return "x";
    const std::vector<std::string>& pieces = (*fragments_)[in_.byte() % fragments_->size()];
    const size_t first = static_cast<size_t>(in_.range(0, static_cast<int64_t>(pieces.size()) - 1));
    const size_t count = 1 + in_.byte() % 64;
    std::string out;
    for (size_t i = first; i < pieces.size() && i < first + count; ++i) out += pieces[i];
    return out;
  }

  std::string expr(int depth) {
    if (depth > 8) return pick(kNames);
    switch (in_.byte() % 14) {
      case 0:
        return pick(kLiterals);
      case 1:
        return pick(kNames);
      case 2:
        return "(" + expr(depth + 1) + " " + pick(kBinary) + " " + expr(depth + 1) + ")";
      case 3:
        return std::string(pick(kUnary)) + expr(depth + 1);
      case 4:
        return "(" + expr(depth + 1) + " if " + expr(depth + 1) + " else " + expr(depth + 1) + ")";
      case 5:
        return "[" + expr(depth + 1) + ", " + expr(depth + 1) + "]";
      case 6:
        return "{" + expr(depth + 1) + ": " + expr(depth + 1) + "}";
      case 7:
        return expr(depth + 1) + "." + pick(kAttributes);
      case 8:
        return expr(depth + 1) + "[" + expr(depth + 1) + "]";
      case 9:
        return expr(depth + 1) + "[" + pick(kLiterals) + ":" + pick(kLiterals) + ":" + pick(kSteps) + "]";
      case 10:
        return "(" + expr(depth + 1) + " | " + pick(kFilters) + ")";
      case 11:
        return "(" + expr(depth + 1) + " is " + pick(kTests) + ")";
      case 12:
        return std::string(pick(kCalls)) + expr(depth + 1) + ")";
      default:
        return expr(depth + 1) + "." + pick(kMethods) + expr(depth + 1) + ")";
    }
  }

  static constexpr const char* kOpen[] = {"{%", "{%-", "{%+"};
  static constexpr const char* kClose[] = {"%}", "-%}", "+%}"};
  static constexpr const char* kTexts[] = {"a", "\n", "  \n  ", "<|im_start|>", "é\t", "{", "}}", "%}"};
  static constexpr const char* kTargets[] = {"x", "m", "k, v", "(a, b)", "loop"};
  static constexpr const char* kNames[] = {"x",
                                           "m",
                                           "ns",
                                           "ns.a",
                                           "messages",
                                           "tools",
                                           "loop",
                                           "bos_token",
                                           "add_generation_prompt",
                                           "enable_thinking",
                                           "range",
                                           "none",
                                           "true",
                                           "caller",
                                           "undefined_name"};
  static constexpr const char* kLiterals[] = {"0",
                                              "1",
                                              "-1",
                                              "2",
                                              "9223372036854775807",
                                              "(-9223372036854775807 - 1)",
                                              "99999999999999999999",
                                              "1.5",
                                              "1e308",
                                              "'a'",
                                              "'\\u00e9\\n'",
                                              "''",
                                              "none",
                                              "[]",
                                              "{}",
                                              "(1,)"};
  static constexpr const char* kSteps[] = {"", "1", "-1", "2", "(-9223372036854775807 - 1)", "0"};
  static constexpr const char* kBinary[] = {
      "+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", ">", "<=", ">=", "in", "not in", "and", "or"};
  static constexpr const char* kUnary[] = {"not ", "-", "+"};
  static constexpr const char* kAttributes[] = {"a", "role", "content", "self", "l", "0", "length", "index"};
  static constexpr const char* kFilters[] = {"length",
                                             "string",
                                             "tojson",
                                             "tojson(indent=2)",
                                             "list",
                                             "unique",
                                             "sort",
                                             "reverse",
                                             "first",
                                             "last",
                                             "join(', ')",
                                             "trim",
                                             "upper",
                                             "title",
                                             "indent(4)",
                                             "int",
                                             "float",
                                             "abs",
                                             "sum",
                                             "items",
                                             "dictsort",
                                             "batch(2, 0)",
                                             "map('string')",
                                             "select",
                                             "selectattr('role')",
                                             "default('d')",
                                             "replace('a', 'bb')",
                                             "count",
                                             "wordcount",
                                             "max",
                                             "min",
                                             "round",
                                             "safe",
                                             "escape"};
  static constexpr const char* kTests[] = {"defined",  "none",    "string",      "mapping",         "iterable",
                                           "sequence", "integer", "odd",         "divisibleby(-1)", "in([1])",
                                           "not none", "eq(1)",   "sameas(none)"};
  static constexpr const char* kCalls[] = {"range(", "namespace(a=", "dict(", "m(", "loop.cycle(", "caller("};
  static constexpr const char* kMethods[] = {"split(", "strip(", "startswith(", "replace('a', ", "join(",  "get(",
                                             "find(",  "count(", "endswith(",   "rsplit(",       "items(", "upper("};

  izwi::fuzz::Bytes& in_;
  const std::vector<std::vector<std::string>>* fragments_;
};

void render_all_ways(const std::string& source, bool both_prompts) {
  static const ordered_json kMessages = ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Zürich?"},
    {"role": "assistant", "content": "", "reasoning_content": "Call the tool.", "tool_calls": [
      {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}]},
    {"role": "tool", "content": "{\"temperature\": 21.5}", "tool_call_id": "call12345"},
    {"role": "assistant", "content": "<think>\nok\n</think>\n\n21.5 °C"}])");
  static const ordered_json kTools = ordered_json::parse(
      R"([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])");
  try {
    const izwi::jinja::ChatTemplate tmpl(source, "fuzz.jinja");
    for (const bool generation_prompt : {false, true}) {
      if (generation_prompt && !both_prompts) break;
      izwi::jinja::ChatTemplateInputs in;
      in.messages = kMessages;
      in.tools = generation_prompt ? kTools : ordered_json();
      in.add_generation_prompt = generation_prompt;
      in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
      in.kwargs = {{"enable_thinking", generation_prompt}};
      try {
        tmpl.render(in);
      } catch (const izwi::Error&) {
      }
    }
  } catch (const izwi::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::vector<std::string>> fragments = load_fragments();
  // A hundredth of a render's budget: every limit is still reached (tests/unit covers the real
  // one), in a tenth of a second instead of 20 s under ASan.
  const izwi::jinja::RenderStepLimit steps(izwi::jinja::kMaxRenderSteps / 100);
  render_all_ways(std::string(reinterpret_cast<const char*>(data), size), true);
  izwi::fuzz::Bytes choices(data, size);
  render_all_ways(Grammar(choices, nullptr).body(0), false);
  izwi::fuzz::Bytes splices(data, size);
  render_all_ways(Grammar(splices, &fragments).body(0), false);
  return 0;
}
