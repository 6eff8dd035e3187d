// /v1/completions on a model folder without a tokenizer: the answer is its token ids, as vLLM's
// return_tokens_as_token_ids renders them ("token_id:N" for each token) with the ids themselves
// in `token_ids`, whole and streamed; chat, which needs a tokenizer, points to /v1/completions.

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/reference.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

std::string rendered(const std::vector<int32_t>& ids) {
  std::string text;
  for (const int32_t id : ids) text += "token_id:" + std::to_string(id);
  return text;
}

/// The choices of a stream's `data:` events, [DONE] left out.
std::vector<json> streamed_choices(const std::string& body) {
  std::vector<json> choices;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: {", 0) == 0) choices.push_back(json::parse(line.substr(6)).at("choices").at(0));
  }
  return choices;
}

TEST(ServerTokenIds, CompletionsWithoutATokenizerReturnTheTokenIds) {
  server::ServerOptions options;
  options.models = {{"ids", testing::fixture_dir("llama-tiny")}};  // config.json and weights, no tokenizer
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  json request = {{"model", "ids"}, {"prompt", {1, 15, 30, 7}}, {"max_tokens", 6}, {"temperature", 0}};

  const httplib::Result whole = client.Post("/v1/completions", request.dump(), "application/json");
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200) << whole->body;
  const json choice = json::parse(whole->body).at("choices").at(0);
  const std::vector<int32_t> ids = choice.at("token_ids").get<std::vector<int32_t>>();
  ASSERT_EQ(ids.size(), 6u);
  for (const int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 512) << id;
  EXPECT_EQ(choice.at("text"), rendered(ids));
  EXPECT_EQ(json::parse(whole->body).at("usage").at("completion_tokens"), 6);

  // Streamed (greedy, so the same ids), with the prompt echoed as ids too.
  request["stream"] = true;
  request["echo"] = true;
  const httplib::Result stream = client.Post("/v1/completions", request.dump(), "application/json");
  ASSERT_TRUE(stream);
  ASSERT_EQ(stream->status, 200) << stream->body;
  std::vector<int32_t> streamed_ids;
  std::string streamed_text;
  for (const json& c : streamed_choices(stream->body)) {
    for (const int32_t id : c.at("token_ids").get<std::vector<int32_t>>()) streamed_ids.push_back(id);
    streamed_text += c.at("text").get<std::string>();
  }
  EXPECT_EQ(streamed_ids, ids);
  EXPECT_EQ(streamed_text, rendered({1, 15, 30, 7}) + rendered(ids));

  // Chat needs a tokenizer to render messages: the error says what serves this model.
  const json chat = {{"model", "ids"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  const httplib::Result refused = client.Post("/v1/chat/completions", chat.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(refused->body.find("no tokenizer to render messages: use /v1/completions with token ids"),
            std::string::npos)
      << refused->body;
}

}  // namespace
}  // namespace izwi
