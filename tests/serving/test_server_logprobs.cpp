// Log probabilities over HTTP: /v1/completions' `logprobs` (tokens, token_logprobs, top_logprobs,
// text_offset) with `echo` and max_tokens 0 (prompt scoring, against the fixture's reference
// teacher-forced logits), /v1/chat/completions' `logprobs` / `top_logprobs` (content[] with token,
// logprob, bytes, top_logprobs); both equal to the engine's own values, streamed equal to whole,
// and out-of-range counts refused with a 400 naming the field.

#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

constexpr double kOwnLogprobTolerance = 1e-4;
// Twice the parity tests' logit tolerance: a log-softmax of logits each within 1e-4.
constexpr double kReferenceLogprobTolerance = 2e-4;

std::vector<json> streamed_choices(const std::string& body) {
  std::vector<json> choices;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: {", 0) == 0) {
      const json event = json::parse(line.substr(6));
      if (!event.at("choices").empty()) choices.push_back(event.at("choices").at(0));
    }
  }
  return choices;
}

json post(httplib::Client& client, const std::string& path, const json& body, int status = 200) {
  const httplib::Result r = client.Post(path, body.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return json();
  EXPECT_EQ(r->status, status) << body.dump() << " -> " << r->body;
  return body.value("stream", false) && status == 200 ? json(r->body) : json::parse(r->body);
}

std::string token_id(int32_t id) { return "token_id:" + std::to_string(id); }

// A completions `logprobs` object: parallel arrays of one length, offsets advancing by the
// tokens' lengths, each top list's probabilities summing to <= 1.
void expect_completion_shape(const json& lp, size_t top) {
  const size_t n = lp.at("tokens").size();
  ASSERT_EQ(lp.at("token_logprobs").size(), n);
  ASSERT_EQ(lp.at("top_logprobs").size(), n);
  ASSERT_EQ(lp.at("text_offset").size(), n);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) {
      EXPECT_EQ(lp["text_offset"][i].get<int64_t>(),
                lp["text_offset"][i - 1].get<int64_t>() +
                    static_cast<int64_t>(lp["tokens"][i - 1].get<std::string>().size()));
    }
    if (lp["top_logprobs"][i].is_null()) continue;
    EXPECT_EQ(lp["top_logprobs"][i].size(), top);
    double mass = 0;
    for (const auto& [name, value] : lp["top_logprobs"][i].items()) mass += std::exp(value.get<double>());
    EXPECT_LE(mass, 1.0 + 1e-6);
  }
}

// llama-tiny has no tokenizer: tokens are named "token_id:N".
TEST(ServerLogprobs, CompletionsEchoScoresThePromptAndLogprobsEqualTheEngines) {
  const testing::ReferenceTensors ref("llama-tiny");
  const std::vector<int32_t> prompt = ref.ids("case0.prompt");
  server::ServerOptions options;
  options.models = {{"m", testing::fixture_dir("llama-tiny")}};
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);

  // Echo with max_tokens 0: the prompt alone, the first token's value null, the others the
  // reference's teacher-forced log-softmax.
  json echo = {{"model", "m"}, {"prompt", prompt}, {"max_tokens", 0}, {"echo", true}, {"logprobs", 2}};
  const json scored = post(client, "/v1/completions", echo);
  const json& choice = scored.at("choices").at(0);
  EXPECT_EQ(choice.at("finish_reason"), "length");
  EXPECT_EQ(scored.at("usage").at("completion_tokens"), 0);
  const json& lp = choice.at("logprobs");
  ASSERT_EQ(lp.at("tokens").size(), prompt.size());
  expect_completion_shape(lp, 2);
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  EXPECT_EQ(lp["text_offset"][0], 0);
  const at::Tensor want = at::log_softmax(ref.get("case0.teacher_forced_logits").to(at::kFloat), 1);
  for (size_t i = 0; i < prompt.size(); ++i) {
    EXPECT_EQ(lp["tokens"][i], token_id(prompt[i]));
    if (i == 0) continue;
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want[static_cast<int64_t>(i) - 1][prompt[i]].item<double>(),
                kReferenceLogprobTolerance)
        << "prompt token " << i;
  }
  std::string text;
  for (const int32_t id : prompt) text += token_id(id);
  EXPECT_EQ(choice.at("text"), text);
  // Without logprobs, echo with max_tokens 0 still answers the prompt, with logprobs null.
  echo.erase("logprobs");
  EXPECT_TRUE(post(client, "/v1/completions", echo).at("choices").at(0).at("logprobs").is_null());

  // Generated tokens: the engine's own values.
  Engine engine(testing::fixture_dir("llama-tiny"));
  Request request;
  request.prompt_ids = prompt;
  request.params.max_tokens = 6;
  request.params.sampling.temperature = 0.0f;
  request.params.logprobs = 3;
  const Output own = engine.generate(request);
  const json body = {{"model", "m"}, {"prompt", prompt}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 3}};
  const json whole = post(client, "/v1/completions", body).at("choices").at(0).at("logprobs");
  expect_completion_shape(whole, 3);
  ASSERT_EQ(whole.at("tokens").size(), own.tokens.size());
  for (size_t k = 0; k < own.tokens.size(); ++k) {
    EXPECT_EQ(whole["tokens"][k], token_id(own.tokens[k]));
    EXPECT_NEAR(whole["token_logprobs"][k].get<double>(), own.logprobs[k].logprob, kOwnLogprobTolerance);
    for (const auto& [id, value] : own.logprobs[k].top) {
      EXPECT_NEAR(whole["top_logprobs"][k].at(token_id(id)).get<double>(), value, kOwnLogprobTolerance);
    }
  }

  // Streamed: the chunks' arrays concatenate to the whole answer's.
  json stream_body = body;
  stream_body["stream"] = true;
  json joined = {{"tokens", json::array()},
                 {"token_logprobs", json::array()},
                 {"top_logprobs", json::array()},
                 {"text_offset", json::array()}};
  for (const json& c : streamed_choices(post(client, "/v1/completions", stream_body).get<std::string>())) {
    if (c.at("logprobs").is_null()) continue;
    for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
      for (const json& v : c["logprobs"][key]) joined[key].push_back(v);
    }
  }
  EXPECT_EQ(joined, whole);

  // Out of range, or max_tokens 0 without echo: a 400 naming the field.
  json bad = body;
  bad["logprobs"] = 21;
  EXPECT_EQ(post(client, "/v1/completions", bad, 400).at("error").at("param"), "logprobs");
  bad["logprobs"] = -1;
  EXPECT_EQ(post(client, "/v1/completions", bad, 400).at("error").at("param"), "logprobs");
  bad = body;
  bad["max_tokens"] = 0;
  EXPECT_EQ(post(client, "/v1/completions", bad, 400).at("error").at("param"), "max_tokens");
}

TEST(ServerLogprobs, ChatLogprobsCarryTokensBytesAndTopAlternatives) {
  testing::TempDir dir;
  testing::write_text_model(dir.path());
  server::ServerOptions options;
  options.models = {{"text", dir.path()}};
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const json messages = {{{"role", "user"}, {"content", "Say something."}}};
  const json body = {{"model", "text"},  {"messages", messages}, {"max_tokens", 5},   {"temperature", 0},
                     {"logprobs", true}, {"top_logprobs", 2},    {"ignore_eos", true}};
  const json answer = post(client, "/v1/chat/completions", body);
  const json& content = answer.at("choices").at(0).at("logprobs").at("content");
  ASSERT_EQ(content.size(), 5u);

  Engine engine(dir.path());
  Request request;
  request.messages = {{"user", "Say something."}};
  request.params.max_tokens = 5;
  request.params.ignore_eos = true;
  request.params.sampling.temperature = 0.0f;
  request.params.logprobs = 2;
  const Output own = engine.generate(request);
  ASSERT_EQ(own.logprobs.size(), 5u);
  for (size_t k = 0; k < content.size(); ++k) {
    const json& e = content[k];
    EXPECT_EQ(e.at("token"), engine.tokenizer()->decode({own.tokens[k]}));
    EXPECT_NEAR(e.at("logprob").get<double>(), own.logprobs[k].logprob, kOwnLogprobTolerance);
    const std::string bytes = engine.tokenizer()->token_bytes(own.tokens[k]);
    ASSERT_EQ(e.at("bytes").size(), bytes.size());
    for (size_t b = 0; b < bytes.size(); ++b) EXPECT_EQ(e["bytes"][b], static_cast<unsigned char>(bytes[b]));
    ASSERT_EQ(e.at("top_logprobs").size(), 2u);
    EXPECT_GE(e["top_logprobs"][0]["logprob"].get<double>(), e["top_logprobs"][1]["logprob"].get<double>());
    EXPECT_EQ(e["top_logprobs"][0]["token"], e["token"]);  // greedy: the top-1
    EXPECT_LE(std::exp(e["top_logprobs"][0]["logprob"].get<double>()) +
                  std::exp(e["top_logprobs"][1]["logprob"].get<double>()),
              1.0 + 1e-6);
  }

  // Streamed: the chunks' content entries concatenate to the whole answer's.
  json stream_body = body;
  stream_body["stream"] = true;
  json joined = json::array();
  for (const json& c : streamed_choices(post(client, "/v1/chat/completions", stream_body).get<std::string>())) {
    if (!c.at("logprobs").is_null()) {
      for (const json& e : c["logprobs"]["content"]) joined.push_back(e);
    }
  }
  EXPECT_EQ(joined, content);

  // Without logprobs: null; top_logprobs out of range or without logprobs: a 400 naming it.
  json plain = body;
  plain.erase("logprobs");
  plain.erase("top_logprobs");
  EXPECT_TRUE(post(client, "/v1/chat/completions", plain).at("choices").at(0).at("logprobs").is_null());
  json bad = body;
  bad["top_logprobs"] = 21;
  EXPECT_EQ(post(client, "/v1/chat/completions", bad, 400).at("error").at("param"), "top_logprobs");
  bad["top_logprobs"] = 1;
  bad["logprobs"] = false;
  EXPECT_EQ(post(client, "/v1/chat/completions", bad, 400).at("error").at("param"), "top_logprobs");
}

}  // namespace
}  // namespace izwi
