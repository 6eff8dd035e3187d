// izwi-chat: each input line is a user turn answered with streamed text; errors go to stderr.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

TEST(CliChat, AnswersEachLineWithTheTemplatedConversation) {
  testing::TempDir dir;
  const std::string model = testing::write_text_model(dir.path() + "/model");
  const std::string input = dir.write("input.txt", "Hello there\nAnd again\n");
  const testing::CliRun run =
      testing::run_example("izwi-chat", "--model " + model + " --max-tokens 6 --temperature 0 < " + input);
  ASSERT_EQ(run.exit_code, 0) << run.err;

  // The first reply is the greedy continuation of the one-turn conversation.
  Engine engine(model);
  Request first;
  first.messages = {{"user", "Hello there"}};
  first.params.max_tokens = 6;
  const std::string reply = engine.generate(first).text;
  EXPECT_EQ(run.out.rfind("> " + reply + "\n> ", 0), 0u) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '>'), 3) << run.out;  // two turns, then end of input
}

// --json: no "> " prompt, one line per reply with its text, ids and finish reason; and no
// temperature of the tool's own: without --temperature the model's default (greedy here) decides.
TEST(CliChat, JsonPrintsOneLinePerReply) {
  testing::TempDir dir;
  const std::string model = testing::write_text_model(dir.path() + "/model");
  const std::string input = dir.write("input.txt", "Hello there\nAnd again\n");
  const testing::CliRun run =
      testing::run_example("izwi-chat", "--model " + model + " --max-tokens 6 --json < " + input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find('>'), std::string::npos) << run.out;

  Engine engine(model);
  Request first;
  first.messages = {{"user", "Hello there"}};
  first.params.max_tokens = 6;
  const Output expected = engine.generate(first);
  const nlohmann::json line = nlohmann::json::parse(run.out.substr(0, run.out.find('\n')));
  EXPECT_EQ(line.at("text"), expected.text);
  EXPECT_EQ(line.at("tokens"), nlohmann::json(expected.tokens));
  EXPECT_EQ(line.at("finish_reason"), to_string(expected.finish_reason));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2) << run.out;  // two turns
}

TEST(CliChat, ErrorsGoToStderrWithANonZeroExit) {
  testing::expect_cli_errors("izwi-chat", {{"", "--model is required"},
                                           {"--model " + testing::fixture_dir("llama-tiny"), "has no tokenizer"}});
}

}  // namespace
}  // namespace izwi
