// `n` choices over HTTP, asked by the official OpenAI client (tests/serving/choices_client.mjs):
// greedy choices equal each other and the engine's greedy answer; seeded sampled choices differ,
// repeat, and equal the engine's choices of the same seed; streamed chunks carry each choice's
// index and reassemble to the whole answer, logprobs included; usage counts the prompt once and
// every choice's tokens; bad counts (n, best_of, logprobs, top_logprobs) are 400s naming the field;
// and afterwards no request runs or waits and no KV block is held, also after a client hangs up.

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "common/temp_dir.h"
#include "izwi/engine.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

// The value of a /metrics gauge line that starts with `name{`.
double metric(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  ADD_FAILURE() << "no metric " << name << " in\n" << text;
  return -1;
}

// Nothing leaked: no live request and no KV block held (cached blocks are free), within 5 s.
void expect_idle(testing::RunningServer& server) {
  httplib::Client client("127.0.0.1", server.port());
  client.set_default_headers({{"Authorization", "Bearer sk-izwi-test"}});
  std::string text;
  for (int i = 0; i < 100; ++i) {
    const httplib::Result r = client.Get("/metrics");
    ASSERT_TRUE(r);
    text = r->body;
    if (metric(text, "vllm:num_requests_running") == 0 && metric(text, "vllm:num_requests_waiting") == 0 &&
        metric(text, "vllm:kv_cache_usage_perc") == 0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "the server is not idle:\n" << text;
}

std::vector<std::string> texts(const json& answer) {
  std::vector<std::string> out;
  for (const json& c : answer.at("choices")) out.push_back(c.at("text").get<std::string>());
  return out;
}

void expect_indexed(const json& answer, size_t n, const std::string& what) {
  ASSERT_EQ(answer.at("choices").size(), n) << what;
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(answer["choices"][i]["index"], i) << what;
}

TEST(ServerChoices, OpenAiClientGetsNChoicesWholeAndStreamed) {
  testing::TempDir dir;
  testing::RunningServer server(testing::text_model_options(dir));

  const json got = testing::run_node_client("choices_client.mjs", server.url() + "/v1 sk-izwi-test text");

  Engine engine(dir.path());
  const std::vector<ChatMessage> messages = {{"user", "tell me about the sea"}};
  const int32_t prompt_tokens = static_cast<int32_t>(engine.tokenizer()->encode_chat(messages).size());

  // Greedy: every choice is the engine's greedy answer; the stream says the same.
  Request greedy;
  greedy.messages = messages;
  greedy.params.max_tokens = 8;
  greedy.params.sampling.temperature = 0.0f;
  const Output greedy_out = engine.generate(greedy);
  for (const char* kind : {"chat_greedy", "chat_greedy_stream"}) {
    expect_indexed(got[kind], 3, kind);
    for (const std::string& text : texts(got[kind])) EXPECT_EQ(text, greedy_out.text) << kind;
    EXPECT_EQ(got[kind]["usage"]["prompt_tokens"], prompt_tokens) << kind;
    EXPECT_EQ(got[kind]["usage"]["completion_tokens"], 3 * greedy_out.tokens.size()) << kind;
  }
  EXPECT_EQ(got["chat_greedy_stream"]["after_finish"], 0);

  // Seeded sampling: the engine's choices of the same seed; not all equal; repeated; streamed equal.
  Request sampled = greedy;
  sampled.params.n = 4;
  sampled.params.sampling.temperature = 1.0f;
  sampled.params.seed = 5;
  const Output sampled_out = engine.generate(sampled);
  ASSERT_EQ(sampled_out.choices.size(), 4u);
  expect_indexed(got["chat_sampled"], 4, "chat_sampled");
  size_t completion_tokens = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got["chat_sampled"]["choices"][i]["text"], sampled_out.choices[i].text) << "choice " << i;
    EXPECT_EQ(got["chat_sampled"]["choices"][i]["logprobs"]["content"].size(), sampled_out.choices[i].tokens.size());
    completion_tokens += sampled_out.choices[i].tokens.size();
  }
  const std::vector<std::string> sampled_texts = texts(got["chat_sampled"]);
  EXPECT_GT(std::set<std::string>(sampled_texts.begin(), sampled_texts.end()).size(), 1u)
      << "four sampled choices of a random-weight model are not all equal";
  EXPECT_EQ(got["chat_sampled"]["usage"]["completion_tokens"], completion_tokens);
  EXPECT_EQ(got["chat_sampled"]["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(got["chat_sampled_again"], got["chat_sampled"]);
  EXPECT_EQ(got["chat_sampled_stream"]["choices"], got["chat_sampled"]["choices"]);
  EXPECT_EQ(got["chat_sampled_stream"]["usage"], got["chat_sampled"]["usage"]);
  EXPECT_EQ(got["chat_sampled_stream"]["after_finish"], 0);

  // Completions with echo and logprobs: each choice echoes the prompt with its scores; the
  // streamed choices (text offsets counted per choice) equal the whole ones.
  expect_indexed(got["completion"], 3, "completion");
  for (const json& c : got["completion"]["choices"]) {
    EXPECT_EQ(c["text"].get<std::string>().rfind("the sea is", 0), 0u) << c.dump();
    EXPECT_TRUE(c["logprobs"]["token_logprobs"][0].is_null());
    EXPECT_EQ(c["logprobs"]["text_offset"][0], 0);
  }
  EXPECT_EQ(got["completion_stream"]["choices"], got["completion"]["choices"]);

  for (const auto& [name, param] : std::map<std::string, std::string>{{"n_0", "n"},
                                                                      {"n_129", "n"},
                                                                      {"n_text", "n"},
                                                                      {"best_of", "best_of"},
                                                                      {"logprobs_21", "logprobs"},
                                                                      {"top_logprobs_21", "top_logprobs"}}) {
    EXPECT_EQ(got["bad"][name]["status"], 400) << name;
    EXPECT_EQ(got["bad"][name]["param"], param) << name;
  }
  expect_indexed(got["best_of_n"], 2, "best_of = n");
  expect_idle(server);
}

// A client that hangs up (streamed, or timing out on a whole answer) ends every choice.
TEST(ServerChoices, AHangUpEndsEveryChoiceAndFreesTheirBlocks) {
  testing::TempDir dir;
  testing::RunningServer server(testing::text_model_options(dir));
  for (const bool stream : {true, false}) {
    httplib::Client client("127.0.0.1", server.port());
    client.set_default_headers({{"Authorization", "Bearer sk-izwi-test"}});
    const auto generated = [&] { return metric(client.Get("/metrics")->body, "vllm:generation_tokens_total"); };
    const double before = generated();
    const json body = {{"model", "text"},
                       {"messages", {{{"role", "user"}, {"content", "tell me about the sea"}}}},
                       {"n", 4},
                       {"max_tokens", 400},
                       {"ignore_eos", true},
                       {"stream", stream}};
    if (stream) {
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/chat/completions";
      req.body = body.dump();
      req.set_header("Content-Type", "application/json");
      req.set_header("Authorization", "Bearer sk-izwi-test");
      int chunks = 0;
      req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };
      httplib::Response res;
      httplib::Error error = httplib::Error::Success;
      client.send(req, res, error);  // the receiver gives up after 3 chunks: the connection closes
    } else {
      client.set_read_timeout(0, 5000);  // long before 4 x 400 tokens are made
      client.Post("/v1/chat/completions", body.dump(), "application/json");
    }
    expect_idle(server);
    // Had only choice 0 ended, the other three would have made their 400 tokens each. How many all
    // four make before the hang-up is seen depends on the machine's speed (a quiet one: 5-121
    // streamed, 109-309 whole; 580-1080 whole with a 30 ms timeout), so that is not the measure.
    EXPECT_LT(generated() - before, 3 * 400) << (stream ? "stream" : "whole");
  }
}

}  // namespace
}  // namespace izwi
