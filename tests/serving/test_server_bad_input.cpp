// The bad inputs (an unknown schema keyword, a schema too deep or too large, a tool without
// a name, logprobs > 20, and n > 128), sent by the official OpenAI client (bad_input_client.mjs):
// each is a 400 naming the field, and after each /metrics shows nothing left behind (no request
// running or waiting, no KV block held); a good request is served afterwards.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/temp_dir.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

TEST(ServerBadInput, EachIsA400NamingTheFieldAndLeavesNothingBehind) {
  testing::TempDir dir;
  testing::RunningServer server(testing::text_model_options(dir));

  const nlohmann::json got = testing::run_node_client("bad_input_client.mjs", server.url() + "/v1 sk-izwi-test text");

  const std::map<std::string, std::string> params = {
      {"unknown_schema_keyword", "response_format.json_schema.schema"},
      {"schema_too_deep", "response_format.json_schema.schema"},
      {"schema_too_large", "response_format.json_schema.schema"},
      {"tool_without_name", "tools[0].function.name"},
      {"completion_logprobs_21", "logprobs"},
      {"chat_top_logprobs_21", "top_logprobs"},
      {"streamed_logprobs_21", "logprobs"},
      {"n_129", "n"},
  };
  for (const auto& [name, param] : params) {
    const nlohmann::json& answer = got.at(name);
    EXPECT_EQ(answer["status"], 400) << name << ": " << answer.dump();
    EXPECT_EQ(answer["param"], param) << name << ": " << answer.dump();
    EXPECT_EQ(answer["after"]["running"], 0) << name;
    EXPECT_EQ(answer["after"]["waiting"], 0) << name;
    EXPECT_EQ(answer["after"]["kv_usage"], 0) << name;
  }
  // The messages say what is wrong, not only where.
  for (const auto& [name, says] : std::map<std::string, std::string>{{"unknown_schema_keyword", "'not'"},
                                                                     {"schema_too_deep", "max_depth"},
                                                                     {"schema_too_large", "max_schema_bytes"}}) {
    EXPECT_NE(got[name]["message"].get<std::string>().find(says), std::string::npos) << got[name].dump();
  }
  EXPECT_EQ(got["good_after"]["finish_reason"], "length");
  EXPECT_EQ(got["good_after"]["usage"]["completion_tokens"], 4);
  EXPECT_EQ(got["good_after"]["after"]["running"], 0);
  EXPECT_EQ(got["good_after"]["after"]["kv_usage"], 0);
}

}  // namespace
}  // namespace izwi
