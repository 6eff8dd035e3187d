// The izwi-tokenize command line contract.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "common/cli_run.h"
#include "common/temp_dir.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

using testing::shell_quoted;

testing::CliRun run_cli(const std::string& args) { return testing::run_example("izwi-tokenize", args); }

nlohmann::json reference_cases() {
  std::ifstream in(testing::tokenizer_fixture("tokenizer-qwen2-style") + "/reference.json");
  return nlohmann::json::parse(in).at("cases");
}

const std::string kTokenizer = "--tokenizer " + testing::tokenizer_fixture("tokenizer-qwen2-style");

TEST(CliTokenize, TextToJsonIdsAndBack) {
  // A few cases as shell arguments (each run loads the library, so not all 24: the text file
  // test covers every case).
  for (const auto& c : reference_cases()) {
    const std::string text = c.at("text");
    if (text.find("world") == std::string::npos && text.find("<|") == std::string::npos &&
        text.find("caf") == std::string::npos) {
      continue;
    }
    const testing::CliRun run = run_cli(kTokenizer + " --text " + shell_quoted(text) + " --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out).at("ids"), c.at("ids")) << text;
  }
  const testing::CliRun plain = run_cli(kTokenizer + " --text 'Hello, world!'");
  EXPECT_EQ(plain.out, "45,359,317,17,378,270,81,73,6\n");
  const testing::CliRun decoded = run_cli(kTokenizer + " --decode 45,359,317,17,378,270,81,73,6");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, "Hello, world!\n");
  EXPECT_EQ(run_cli(kTokenizer + " --decode 0,45 --skip-special-tokens --json").out, "{\"text\":\"H\"}\n");
  const testing::CliRun with_bos = run_cli("--tokenizer " + testing::tokenizer_fixture("tokenizer-tekken-small") +
                                           " --text hi --add-special-tokens");
  EXPECT_EQ(with_bos.out.substr(0, 2), "1,") << with_bos.err;
}

TEST(CliTokenize, TextFileGivesOneLinePerTextWithEscapes) {
  testing::TempDir dir;
  std::string file;
  std::vector<nlohmann::json> expected;
  for (const auto& c : reference_cases()) {
    std::string line;
    for (char ch : c.at("text").get<std::string>())
      line += ch == '\n' ? "\\n" : ch == '\\' ? "\\\\" : std::string(1, ch);
    file += line + "\n";
    expected.push_back(c.at("ids"));
  }
  const testing::CliRun run = run_cli(kTokenizer + " --json --text-file " + dir.write("texts.txt", file));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::string line;
  size_t index = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(index, expected.size());
    EXPECT_EQ(nlohmann::json::parse(line).at("ids"), expected[index]) << "line " << index + 1;
    ++index;
  }
  EXPECT_EQ(index, expected.size());
  EXPECT_EQ(run_cli(kTokenizer + " --text-file " + dir.write("slash.txt", "a\\\\b\\nc\n")).out,
            run_cli(kTokenizer + " --text " + shell_quoted("a\\b\nc")).out);
}

// --chat renders a conversation file with the folder's own template (Qwen2.5's, with tools).
TEST(CliTokenize, ChatRendersTheFoldersTemplate) {
  testing::TempDir dir;
  std::ifstream fixture(testing::tokenizer_fixture("tokenizer-qwen2-style") + "/tokenizer.json");
  std::ifstream jinja(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  std::stringstream jinja_text;
  jinja_text << jinja.rdbuf();
  const std::string folder =
      testing::write_tokenizer_dir(dir, nlohmann::json::parse(fixture),
                                   nlohmann::json{{"chat_template", jinja_text.str()}, {"eos_token", "<|im_end|>"}});
  const std::string file = dir.write("chat.json", R"({"messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "content": "{\"temperature\": 21}", "tool_call_id": "c1"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]})");
  const testing::CliRun run =
      run_cli("--tokenizer " + shell_quoted(folder) + " --chat " + shell_quoted(file) + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  const std::string text = out.at("text");
  EXPECT_EQ(text.rfind("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.", 0), 0u) << text;
  EXPECT_NE(text.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<tool_response>\n{\"temperature\": 21}\n</tool_response><|im_end|>\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 22), "<|im_start|>assistant\n");
  const Tokenizer tokenizer = Tokenizer::from_dir(folder);
  EXPECT_EQ(out.at("ids").get<std::vector<int32_t>>(), tokenizer.encode(text));

  const testing::CliRun plain =
      run_cli("--tokenizer " + shell_quoted(folder) + " --chat " + shell_quoted(file) + " --no-generation-prompt");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, text.substr(0, text.size() - 22) + "\n");
}

TEST(CliTokenize, ErrorsGoToStderrWithANonZeroExit) {
  testing::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--text hi", "--model is required"},  // --tokenizer is its other name
      {kTokenizer, "one of --text, --text-file, --decode or --chat is required"},
      {kTokenizer + " --chat /no/such/file.json", "cannot open chat file"},
      {kTokenizer + " --chat " + dir.write("bad.json", "{\"messages\": 1}"), "expected {\"messages\": [...]}"},
      {kTokenizer + " --chat " + dir.write("chat.json", "{\"messages\": []}") + " --text hi", "excludes"},
      {kTokenizer + " --text hi --decode 1", "excludes"},
      {"--tokenizer /no/such/dir --text hi", "does not exist"},
      {kTokenizer + " --decode 1,99999", "outside the vocabulary"},
      {kTokenizer + " --decode 1,x", "'x' is not a token id"},
      {kTokenizer + " --text-file /no/such/file", "cannot open text file"},
      {kTokenizer + " --text-file " + dir.write("bad_escape.txt", "ok\nbad \\t\n"), "bad_escape.txt:2: unknown escape"},
      {kTokenizer + " --text-file " + dir.write("bad_utf8.txt", "ok\nab\xC3\n"),
       "bad_utf8.txt:2: text to encode is not valid UTF-8"},
  };
  testing::expect_cli_errors("izwi-tokenize", cases);
}

}  // namespace
}  // namespace izwi
