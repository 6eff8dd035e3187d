// The tool-call parsers (include/izwi/tool_calls.h) on outputs written as each format's models
// write them (Qwen2.5/3 and Hermes, Llama 3.1-3.3, Mistral Nemo and Mistral Small 3.2), whole and
// streamed in random splits: the streamed pieces reassemble to the whole parse.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "common/tokenizer_files.h"
#include "engine/text_stream.h"
#include "izwi/tool_calls.h"
#include "tool_calls/stream_parser.h"

namespace izwi {
namespace {

struct Reassembled {
  std::string content;
  std::vector<ToolCall> calls;
};

// Feeds `text` in pieces cut at random points (seeded), checks the pieces' shape (a call's first
// piece names it, later pieces only add arguments, indices in order) and joins them.
Reassembled stream(tool_calls::StreamParser parser, const std::string& text, uint32_t seed, size_t max_piece) {
  std::mt19937 rng(seed);
  Reassembled out;
  const auto take = [&](const ToolCallStreamDelta& d) {
    out.content += d.content;
    for (const ToolCallDelta& c : d.calls) {
      if (c.first) {
        EXPECT_EQ(static_cast<size_t>(c.index), out.calls.size());
        EXPECT_FALSE(c.name.empty());
        out.calls.push_back({c.id, c.name, c.arguments});
      } else {
        ASSERT_LT(static_cast<size_t>(c.index), out.calls.size());
        EXPECT_TRUE(c.name.empty() && c.id.empty());
        EXPECT_FALSE(c.arguments.empty());
        out.calls[static_cast<size_t>(c.index)].arguments += c.arguments;
      }
    }
  };
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = std::min(text.size() - pos, 1 + rng() % max_piece);
    take(parser.push(std::string_view(text).substr(pos, n)));
    pos += n;
  }
  take(parser.finish());
  return out;
}

void expect_same(const Reassembled& streamed, const ParsedToolCalls& whole, const std::string& what) {
  EXPECT_EQ(streamed.content, whole.content) << what;
  ASSERT_EQ(streamed.calls.size(), whole.calls.size()) << what;
  for (size_t k = 0; k < whole.calls.size(); ++k) {
    EXPECT_EQ(streamed.calls[k].id, whole.calls[k].id) << what;
    EXPECT_EQ(streamed.calls[k].name, whole.calls[k].name) << what;
    EXPECT_EQ(streamed.calls[k].arguments, whole.calls[k].arguments) << what;
  }
}

// Whole, then streamed in many random splits (one byte at a time among them).
ParsedToolCalls parse_both_ways(ToolCallFormat format, const std::string& text) {
  const ParsedToolCalls whole = parse_tool_calls(format, text);
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const size_t max_piece = seed == 0 ? 1 : 1 + seed % 12;
    expect_same(stream(tool_calls::StreamParser(tool_calls::CallSyntax::of(format)), text, seed, max_piece), whole,
                std::string(to_string(format)) + " seed " + std::to_string(seed) + ": " + text);
  }
  // The public streaming class is the same parser.
  ToolCallStreamParser pub(format);
  Reassembled joined;
  for (const char c : text) joined.content += pub.push(std::string(1, c)).content;
  joined.content += pub.finish().content;
  EXPECT_EQ(joined.content, whole.content);
  return whole;
}

// The format detected for a tokenizer folder whose tokenizer_config.json holds the template of
// tests/data/chat_templates/<file>.
std::optional<ToolCallFormat> detected(const std::string& file) {
  std::ifstream in(testing::tokenizer_fixture("chat_templates/" + file));
  std::stringstream source;
  source << in.rdbuf();
  EXPECT_FALSE(source.str().empty()) << file;
  testing::TempDir dir;
  testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json(), {{"chat_template", source.str()}});
  return detect_tool_call_format(Tokenizer::from_dir(dir.path()));
}

nlohmann::json args(const ToolCall& call) { return nlohmann::json::parse(call.arguments); }

TEST(ToolCalls, HermesQwenCallsWithContentAndParallelCalls) {
  // Qwen2.5-7B-Instruct, two parallel calls after a sentence.
  const std::string text =
      "Let me check both cities.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
      "\"unit\": \"celsius\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Tokyo \\\"Japan\\\" {x}\"}}\n</tool_call>";
  const ParsedToolCalls p = parse_both_ways(ToolCallFormat::Hermes, text);
  EXPECT_EQ(p.content, "Let me check both cities.");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(p.calls[0].id, "");
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Paris", "unit": "celsius"})");
  EXPECT_EQ(args(p.calls[1]).at("city"), "Tokyo \"Japan\" {x}");
  // Qwen3 after its thinking, the closing tag left out at the end of the turn.
  const ParsedToolCalls q = parse_both_ways(
      ToolCallFormat::Hermes, "<tool_call>\n{\"arguments\": {\"q\": [1, 2, {\"a\": null}]}, \"name\": \"search\"}");
  ASSERT_EQ(q.calls.size(), 1u);
  EXPECT_EQ(q.calls[0].name, "search");
  EXPECT_EQ(args(q.calls[0]), nlohmann::json::parse(R"({"q": [1, 2, {"a": null}]})"));
  EXPECT_EQ(q.content, "");
  // A function without parameters: arguments "{}".
  const ParsedToolCalls r = parse_both_ways(ToolCallFormat::Hermes, "<tool_call>{\"name\": \"now\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
}

TEST(ToolCalls, HermesPlainTextAndLookalikesStayContent) {
  for (const std::string text : {std::string("Hello, world!  \n"), std::string("a < b and <tool_ is not a tag <"),
                                 std::string("<tool_call>not json</tool_call> after"),
                                 std::string("<tool_call>{\"arguments\": {}}</tool_call>"),  // no name
                                 std::string("x <tool_call>{\"name\": 3}")}) {
    const ParsedToolCalls p = parse_both_ways(ToolCallFormat::Hermes, text);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Text cut inside a call before its name: the marker and what follows are content.
  EXPECT_EQ(parse_both_ways(ToolCallFormat::Hermes, "ok <tool_call>{\"na").content, "ok <tool_call>{\"na");
  // Named, then cut inside the arguments (max_tokens): the call is kept with what was written.
  const ParsedToolCalls cut =
      parse_both_ways(ToolCallFormat::Hermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"xy");
  ASSERT_EQ(cut.calls.size(), 1u);
  EXPECT_EQ(cut.calls[0].arguments, "{\"a\": \"xy");
}

TEST(ToolCalls, Llama3JsonWithAndWithoutPythonTag) {
  // Llama 3.1-8B-Instruct answering with a custom tool (its template's format).
  const ParsedToolCalls p = parse_both_ways(
      ToolCallFormat::Llama3Json,
      "{\"name\": \"get_current_conditions\", \"parameters\": {\"location\": \"San Francisco, CA\", \"unit\": "
      "\"Fahrenheit\"}}");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "get_current_conditions");
  EXPECT_EQ(args(p.calls[0]).at("unit"), "Fahrenheit");
  EXPECT_EQ(p.content, "");
  // After <|python_tag|>, two calls separated by ';'.
  const ParsedToolCalls two = parse_both_ways(
      ToolCallFormat::Llama3Json,
      "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": 1}}; {\"name\": \"b\", \"parameters\": {}}");
  ASSERT_EQ(two.calls.size(), 2u);
  EXPECT_EQ(two.calls[1].name, "b");
  EXPECT_EQ(two.calls[1].arguments, "{}");
  // Text, or JSON that is not a call, is content.
  for (const std::string text :
       {std::string("The weather is {\"name\": \"x\"} nice."), std::string("{\"answer\": 42}"), std::string("  \n")}) {
    const ParsedToolCalls c = parse_both_ways(ToolCallFormat::Llama3Json, text);
    EXPECT_TRUE(c.calls.empty()) << text;
    EXPECT_EQ(c.content, text);
  }
}

TEST(ToolCalls, MistralNemoArrayAndSmall32Form) {
  // Mistral-Nemo-Instruct-2407: one array.
  const ParsedToolCalls nemo = parse_both_ways(
      ToolCallFormat::Mistral,
      "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"a1B2c3D4e\"}, "
      "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}]");
  ASSERT_EQ(nemo.calls.size(), 2u);
  EXPECT_EQ(nemo.calls[0].id, "");  // an "id" member comes after the name: the caller assigns ids
  EXPECT_EQ(nemo.calls[0].name, "get_weather");
  EXPECT_EQ(args(nemo.calls[0]).at("city"), "Paris");
  EXPECT_EQ(nemo.calls[1].name, "get_time");
  EXPECT_EQ(nemo.content, "");
  // Mistral-Small-3.2 / Devstral: [TOOL_CALLS]name[ARGS]{...} per call, [CALL_ID] optional.
  const ParsedToolCalls small = parse_both_ways(
      ToolCallFormat::Mistral,
      "Sure.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[CALL_ID]Xy12Ab34C[ARGS]{}");
  EXPECT_EQ(small.content, "Sure.");
  ASSERT_EQ(small.calls.size(), 2u);
  EXPECT_EQ(small.calls[0].name, "get_weather");
  EXPECT_EQ(small.calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(small.calls[1].id, "Xy12Ab34C");
  EXPECT_EQ(small.calls[1].arguments, "{}");
  // A marker followed by no call is content.
  for (const std::string text : {std::string("[TOOL_CALLS] what?"), std::string("[TOOL_CALLS][1, 2]")}) {
    const ParsedToolCalls c = parse_both_ways(ToolCallFormat::Mistral, text);
    EXPECT_TRUE(c.calls.empty()) << text;
    EXPECT_EQ(c.content, text);
  }
}

TEST(ToolCalls, ConstrainedShapes) {
  // tool_choice "required": an array of {"name", "parameters"}.
  const std::string array = " [ {\"name\":\"f\",\"parameters\":{\"a\":[1,\"]\"]}} ,{\"parameters\":{},\"name\":\"g\"}]";
  const tool_calls::ScanResult whole =
      tool_calls::scan_tool_calls({tool_calls::CallSyntax::CallArray, ""}, array, /*final=*/true);
  ASSERT_EQ(whole.calls.size(), 2u);
  EXPECT_EQ(whole.calls[0].arguments, R"({"a":[1,"]"]})");
  EXPECT_EQ(whole.calls[1].name, "g");
  // A named function: the output is its arguments.
  const tool_calls::ScanResult named =
      tool_calls::scan_tool_calls({tool_calls::CallSyntax::Arguments, "f"}, "\n{\"a\": 1}\n ", true);
  ASSERT_EQ(named.calls.size(), 1u);
  EXPECT_EQ(named.calls[0].name, "f");
  EXPECT_EQ(named.calls[0].arguments, "{\"a\": 1}");
  for (uint32_t seed = 0; seed < 20; ++seed) {
    expect_same(stream(tool_calls::StreamParser({tool_calls::CallSyntax::CallArray, ""}), array, seed, 1 + seed % 7),
                {whole.content, whole.calls}, "array");
    const Reassembled s =
        stream(tool_calls::StreamParser({tool_calls::CallSyntax::Arguments, "f"}), "\n{\"a\": 1}\n ", seed, 3);
    ASSERT_EQ(s.calls.size(), 1u);
    EXPECT_EQ(s.calls[0].arguments, "{\"a\": 1}");
  }
}

TEST(ToolCalls, FormatNamesAndDetectionFromTemplates) {
  for (const ToolCallFormat f : {ToolCallFormat::Hermes, ToolCallFormat::Llama3Json, ToolCallFormat::Mistral}) {
    EXPECT_EQ(tool_call_format_from_string(to_string(f)), f);
  }
  EXPECT_FALSE(tool_call_format_from_string("pythonic"));
  // Folders whose tokenizer_config.json carries a real model's template.
  const struct {
    const char* template_file;
    std::optional<ToolCallFormat> want;
  } cases[] = {
      {"Qwen-Qwen2.5-7B-Instruct.jinja", ToolCallFormat::Hermes},
      {"Qwen-Qwen3-0.6B.jinja", ToolCallFormat::Hermes},
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", ToolCallFormat::Hermes},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", ToolCallFormat::Llama3Json},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", ToolCallFormat::Llama3Json},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ToolCallFormat::Mistral},
      {"Mistral-Small-3.2-24B-Instruct-2506.jinja", ToolCallFormat::Mistral},
      {"google-gemma-2-2b-it.jinja", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(detected(c.template_file), c.want) << c.template_file;
  }
}

// A long plain reply streams through every format as itself, token-sized pieces at a time (the
// scans resume from their checkpoints rather than rescanning and copying the reply per piece).
TEST(ToolCalls, LongPlainRepliesStreamThrough) {
  std::string text;
  for (int k = 0; text.size() < 400000; ++k) text += "word " + std::to_string(k) + (k % 17 == 0 ? ".\n\n" : " ");
  for (const ToolCallFormat f : {ToolCallFormat::Hermes, ToolCallFormat::Llama3Json, ToolCallFormat::Mistral}) {
    ToolCallStreamParser parser(f);
    std::string joined;
    for (size_t pos = 0; pos < text.size(); pos += 4)
      joined += parser.push(std::string_view(text).substr(pos, 4)).content;
    joined += parser.finish().content;
    EXPECT_EQ(joined, text) << to_string(f);
  }
}

// The text the server parses keeps a format's marker tokens where the tokenizer makes them special,
// and leaves out the other special tokens as the reply text does.
TEST(ToolCalls, TextStreamShowsOnlyTheGivenSpecialTokens) {
  testing::TempDir dir;
  testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json());
  const Tokenizer tokenizer = Tokenizer::from_dir(dir.path());
  ASSERT_TRUE(tokenizer.is_special(301));
  const std::vector<int32_t> ids = {259, 301, 260, 302};  // hello <|eot_id|> xyz <|end_of_text|>
  const auto text_of = [&](std::vector<int32_t> shown) {
    TextStream stream(tokenizer, {}, std::move(shown));
    std::string text;
    for (const int32_t id : ids) text += stream.push(id);
    return text + stream.finish();
  };
  EXPECT_EQ(text_of({}), "helloxyz");
  EXPECT_EQ(text_of({301}), "hello<|eot_id|>xyz");
}

// Mistral's markers are special tokens in tekken: the text parsed keeps them (as the server's does
// with the format's marker ids), and a reply text without them holds no call.
TEST(ToolCalls, SpecialMarkerTokensReachTheParserWhenShown) {
  const Tokenizer tokenizer = Tokenizer::from_dir(testing::tokenizer_fixture("tokenizer-tekken-small"));
  std::vector<int32_t> shown;
  for (const std::string& marker : tool_call_markers(ToolCallFormat::Mistral)) {
    if (const auto id = tokenizer.token_to_id(marker); id && tokenizer.is_special(*id)) shown.push_back(*id);
  }
  ASSERT_FALSE(shown.empty());
  const std::vector<int32_t> ids =
      tokenizer.encode("[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]");
  const auto text_of = [&](std::vector<int32_t> kept) {
    TextStream stream(tokenizer, {}, std::move(kept));
    std::string text;
    for (const int32_t id : ids) text += stream.push(id);
    return text + stream.finish();
  };
  const ParsedToolCalls kept = parse_tool_calls(ToolCallFormat::Mistral, text_of(shown));
  ASSERT_EQ(kept.calls.size(), 1u) << text_of(shown);
  EXPECT_EQ(kept.calls[0].name, "get_weather");
  EXPECT_EQ(args(kept.calls[0]).at("city"), "Paris");
  EXPECT_TRUE(parse_tool_calls(ToolCallFormat::Mistral, text_of({})).calls.empty());
}

}  // namespace
}  // namespace izwi
