// Tool calls over HTTP (docs/serving.md, "Tool calls"): tool_choice "required" and a named
// function always answer valid calls on a random-weight model at temperature 1 (the official
// OpenAI client, arguments validated with ajv, streamed pieces reassembling to the whole answer);
// assistant tool_calls and tool results sent back render through the model's template with the
// arguments as objects; --tool-call-parser picks the format (Mistral's 9-character ids); tool_choice
// auto passes plain text through; malformed tools and tool_choice are 400s naming the field.

#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The random-weight text model with a real chat template (tests/data/chat_templates/<file>) and
// room for its tool prompt.
std::string write_model(const testing::TempDir& dir, const std::string& template_file) {
  testing::write_text_model(dir.path());
  json config = json::parse(read_file(dir.file("config.json")));
  config["max_position_embeddings"] = 4096;
  std::ofstream(dir.file("config.json")) << config.dump();
  const std::string source = read_file(testing::fixture_dir("chat_templates") + "/" + template_file);
  EXPECT_FALSE(source.empty()) << template_file;
  std::ofstream(dir.file("tokenizer_config.json")) << json{{"chat_template", source}}.dump();
  return dir.path();
}

json post(httplib::Client& client, const json& body, int status = 200) {
  const httplib::Result r = client.Post("/v1/chat/completions", body.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return json();
  EXPECT_EQ(r->status, status) << body.dump() << " -> " << r->body;
  return json::parse(r->body);
}

const json kWeather = {{"type", "function"},
                       {"function",
                        {{"name", "get_weather"},
                         {"parameters",
                          {{"type", "object"},
                           {"properties", {{"city", {{"type", "string"}, {"maxLength", 10}}}}},
                           {"required", {"city"}},
                           {"additionalProperties", false}}}}}};

class ServerToolCalls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    write_model(*dir_, "Qwen-Qwen2.5-7B-Instruct.jinja");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static testing::TempDir* dir_;
};
testing::TempDir* ServerToolCalls::dir_ = nullptr;

TEST_F(ServerToolCalls, RequiredAndNamedAlwaysCallValidlyThroughTheOpenAiClient) {
  server::ServerOptions options;
  options.models = {{"text", dir_->path()}};
  options.api_key = "sk-izwi-test";
  testing::RunningServer server(options);
  constexpr int kSeeds = 4;
  const json got = testing::run_node_client("tool_calls_client.mjs",
                                            server.url() + "/v1 sk-izwi-test text " + std::to_string(kSeeds));
  EXPECT_EQ(got.at("failures"), json::array()) << got.dump(2);
  EXPECT_EQ(got.at("checked"), kSeeds * 5 * 2);  // 5 tool_choice cases, whole and streamed
  EXPECT_GE(got.at("calls").get<int>(), kSeeds * 5 * 2);
}

TEST_F(ServerToolCalls, ToolTurnsRenderWithArgumentsAsObjects) {
  server::ServerOptions options;
  options.models = {{"text", dir_->path()}};
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const json body = {{"model", "text"},
                     {"max_tokens", 2},
                     {"tools", json::array({kWeather})},
                     {"messages",
                      {{{"role", "user"}, {"content", "Weather in Paris?"}},
                       {{"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls",
                         {{{"id", "call_1"},
                           {"type", "function"},
                           {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\"}"}}}}}}},
                       {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "18 C, sunny"}}}}};
  const json answer = post(client, body);

  // The prompt the engine renders for the same conversation with the arguments as an object.
  Engine engine(dir_->path());
  std::vector<ChatMessage> messages = {{"user", "Weather in Paris?"}, {"assistant", ""}, {"tool", "18 C, sunny"}};
  messages[1].tool_calls =
      R"([{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}])";
  messages[2].tool_call_id = "call_1";
  ChatOptions chat;
  chat.tools = json::array({kWeather}).dump();
  const std::string prompt = engine.tokenizer()->apply_chat_template(messages, chat);
  EXPECT_NE(prompt.find("{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"), std::string::npos)
      << prompt;
  EXPECT_EQ(answer.at("usage").at("prompt_tokens"), engine.tokenizer()->encode_chat(messages, chat).size());

  // Arguments that are not a JSON object's text: a 400 naming them.
  json bad = body;
  bad["messages"][1]["tool_calls"][0]["function"]["arguments"] = "{city: Paris";
  EXPECT_EQ(post(client, bad, 400).at("error").at("param"), "messages[1].tool_calls[0].function.arguments");
}

TEST_F(ServerToolCalls, AutoPassesPlainTextThroughAndFlagPicksTheFormat) {
  server::ServerOptions options;
  options.models = {{"text", dir_->path()}};
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const json messages = {{{"role", "user"}, {"content", "Hello"}}};
  const json body = {{"model", "text"},
                     {"messages", messages},
                     {"tools", json::array({kWeather})},
                     {"max_tokens", 12},
                     {"temperature", 0}};
  const json answer = post(client, body);
  Engine engine(dir_->path());
  Request request;
  request.messages = {{"user", "Hello"}};
  request.chat.tools = json::array({kWeather}).dump();
  request.params.max_tokens = 12;
  request.params.sampling.temperature = 0.0f;
  const Output own = engine.generate(request);
  ASSERT_EQ(own.text.find("<tool_call>"), std::string::npos);  // a random model writes no call
  const json& choice = answer.at("choices").at(0);
  EXPECT_EQ(choice.at("message").at("content"), own.text);
  EXPECT_FALSE(choice.at("message").contains("tool_calls"));
  EXPECT_EQ(choice.at("finish_reason"), own.finish_reason == FinishReason::Length ? "length" : "stop");

  // --tool-call-parser mistral: calls get Mistral's ids (9 letters and digits).
  server::ServerOptions mistral = options;
  mistral.tool_call_parser = ToolCallFormat::Mistral;
  testing::RunningServer mistral_server(mistral);
  httplib::Client mistral_client(mistral_server.url());
  mistral_client.set_read_timeout(60, 0);
  json required = body;
  required["tool_choice"] = "required";
  required["temperature"] = 1;
  required["seed"] = 3;
  required["max_tokens"] = 400;
  const json called = post(mistral_client, required).at("choices").at(0);
  EXPECT_EQ(called.at("finish_reason"), "tool_calls");
  const std::string id = called.at("message").at("tool_calls").at(0).at("id");
  EXPECT_EQ(id.size(), 9u) << id;

  // n choices: each parsed on its own.
  required["n"] = 3;
  const json choices = post(client, required).at("choices");
  ASSERT_EQ(choices.size(), 3u);
  for (const json& choice : choices) {
    EXPECT_EQ(choice.at("finish_reason"), "tool_calls") << choice;
    const json& call = choice.at("message").at("tool_calls").at(0).at("function");
    EXPECT_EQ(call.at("name"), "get_weather");
    EXPECT_TRUE(json::parse(call.at("arguments").get<std::string>()).at("city").is_string());
  }
}

// tool_choice auto parses the model's own format. A random model writes no call by itself, so the
// reply is made one with response_format: Llama 3's format is a bare JSON object
// {"name": ..., "parameters": {...}}, which a schema can ask for.
TEST_F(ServerToolCalls, AutoParsesTheModelsFormatWholeAndStreamed) {
  server::ServerOptions options;
  options.models = {{"text", dir_->path()}};
  options.tool_call_parser = ToolCallFormat::Llama3Json;
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const json call_schema = {
      {"type", "object"},
      {"properties", {{"name", {{"const", "get_weather"}}}, {"parameters", kWeather["function"]["parameters"]}}},
      {"required", {"name", "parameters"}},
      {"additionalProperties", false}};
  json body = {
      {"model", "text"},
      {"messages", json::array({json{{"role", "user"}, {"content", "Weather?"}}})},
      {"tools", json::array({kWeather})},
      {"max_tokens", 400},
      {"seed", 5},
      {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "call"}, {"schema", call_schema}}}}}};
  const json whole = post(client, body).at("choices").at(0);
  EXPECT_EQ(whole.at("finish_reason"), "tool_calls");
  EXPECT_TRUE(whole.at("message").at("content").is_null());
  const json& calls = whole.at("message").at("tool_calls");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].at("function").at("name"), "get_weather");
  const json arguments = json::parse(calls[0].at("function").at("arguments").get<std::string>());
  EXPECT_TRUE(arguments.at("city").is_string());

  body["stream"] = true;
  const httplib::Result r = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  json joined = json::array();
  std::string content, finish;
  std::istringstream lines(r->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: {", 0) != 0) continue;
    const json event = json::parse(line.substr(6));
    ASSERT_TRUE(event.contains("choices")) << line;
    const json& choice = event.at("choices").at(0);
    if (!choice.at("finish_reason").is_null()) finish = choice["finish_reason"];
    content += choice.at("delta").value("content", "");
    for (const json& piece : choice.at("delta").value("tool_calls", json::array())) {
      if (piece.contains("id")) {
        EXPECT_EQ(piece.at("index"), joined.size());
        joined.push_back(piece);
      } else {
        joined.at(piece.at("index").get<size_t>())["function"]["arguments"] =
            joined[piece["index"].get<size_t>()]["function"]["arguments"].get<std::string>() +
            piece.at("function").at("arguments").get<std::string>();
      }
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(content, "");
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].at("function"), calls[0].at("function"));
  EXPECT_EQ(joined[0].at("type"), "function");
}

TEST_F(ServerToolCalls, BadToolsAndToolChoiceAreRefusedNamingTheField) {
  testing::TempDir plain;
  write_model(plain, "google-gemma-2-2b-it.jinja");  // a template that asks for no tool-call format
  server::ServerOptions options;
  options.models = {{"text", dir_->path()}, {"plain", plain.path()}};
  testing::RunningServer server(options);
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const json base = {{"model", "text"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}};
  const auto refused = [&](json patch) {
    json body = base;
    body.merge_patch(patch);
    return post(client, body, 400).at("error").at("param").get<std::string>();
  };
  json nameless = kWeather;
  nameless["function"].erase("name");
  EXPECT_EQ(refused({{"tools", json::array({nameless})}}), "tools[0].function.name");
  json spaced = kWeather;
  spaced["function"]["name"] = "get weather";
  EXPECT_EQ(refused({{"tools", json::array({spaced})}}), "tools[0].function.name");
  EXPECT_EQ(refused({{"tools", json::array({kWeather, kWeather})}}), "tools[1].function.name");
  EXPECT_EQ(refused({{"tools", "get_weather"}}), "tools");
  EXPECT_EQ(refused({{"tools", json::array({json{{"type", "retrieval"}}})}}), "tools[0].type");
  json bad_parameters = kWeather;
  bad_parameters["function"]["parameters"] = "object";
  EXPECT_EQ(refused({{"tools", json::array({bad_parameters})}}), "tools[0].function.parameters");
  EXPECT_EQ(refused({{"tools", json::array({kWeather})}, {"tool_choice", "always"}}), "tool_choice");
  EXPECT_EQ(refused({{"tools", json::array({kWeather})},
                     {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}}),
            "tool_choice");
  EXPECT_EQ(refused({{"tool_choice", "required"}}), "tool_choice");
  EXPECT_EQ(refused({{"tools", json::array({kWeather})}, {"tool_choice", "required"}, {"ignore_eos", true}}),
            "ignore_eos");
  EXPECT_EQ(refused({{"tools", json::array({kWeather})}, {"parallel_tool_calls", "yes"}}), "parallel_tool_calls");
  // A schema keyword the constraint cannot enforce, for a call that must be valid.
  json unenforceable = kWeather;
  unenforceable["function"]["parameters"]["not"] = {{"type", "null"}};
  EXPECT_EQ(refused({{"tools", json::array({unenforceable})}, {"tool_choice", "required"}}),
            "tools[0].function.parameters");
  EXPECT_EQ(refused({{"tools", json::array({kWeather})},
                     {"tool_choice", "required"},
                     {"response_format", {{"type", "json_object"}}}}),
            "tool_choice");
  // tool_choice auto on a model whose template names no format izwi parses.
  EXPECT_EQ(refused({{"model", "plain"}, {"tools", json::array({kWeather})}}), "tools");
  // ... while tool_choice none renders the tools and parses nothing.
  json none = base;
  none["tools"] = json::array({kWeather});
  none["tool_choice"] = "none";
  none["model"] = "plain";
  post(client, none);
}

}  // namespace
}  // namespace izwi
