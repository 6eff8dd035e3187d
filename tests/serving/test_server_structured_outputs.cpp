// response_format on izwi-server, driven by the official OpenAI client with ajv validating
// (tests/serving/structured_outputs.mjs): 35 schemas covering every supported keyword, chat whole
// and streamed, completions, json_object, at temperature 1 on a random-weight model: every output
// finishes with "stop" and validates (the two schemas without a length bound may instead run out of
// max_tokens: "length", never "stop"); max_tokens inside the document gives "length"; bad formats
// are 400s naming the field.

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

TEST(ServerStructuredOutputs, EveryOutputValidatesWithAjv) {
  testing::TempDir text_dir;
  testing::RunningServer server(testing::text_model_options(text_dir));

  const nlohmann::json got = testing::run_node_client("structured_outputs.mjs", server.url() + "/v1 sk-izwi-test text");
  EXPECT_GE(got["schemas"].get<int>(), 30);
  // 2 seeds x (whole + streamed) per schema, 3 schemas x 2 on completions, json_object 3 x 2.
  EXPECT_EQ(got["checked"].get<int>(), got["schemas"].get<int>() * 4 + 6 + 6);
  EXPECT_TRUE(got["failures"].empty()) << got["failures"].dump(2);
  // Only the schemas without a length bound may run out of max_tokens (then "length", not "stop").
  EXPECT_LT(got["ran_out"].size(), 10u) << got["ran_out"].dump(2);
  std::printf("%zu of %d outputs ran out of max_tokens: %s\n", got["ran_out"].size(), got["checked"].get<int>(),
              got["ran_out"].dump().c_str());
  EXPECT_EQ(got["length"], nlohmann::json::array({"length", "length"}));

  const nlohmann::json& bad = got["bad"];
  const auto expect_400 = [&](const char* name, const char* param, const char* words) {
    EXPECT_EQ(bad[name]["status"], 400) << name << ": " << bad[name].dump();
    EXPECT_EQ(bad[name]["param"], param) << name << ": " << bad[name].dump();
    EXPECT_NE(bad[name]["message"].get<std::string>().find(words), std::string::npos) << bad[name].dump();
  };
  expect_400("unknown_keyword", "response_format.json_schema.schema", "'not'");
  expect_400("too_deep", "response_format.json_schema.schema", "max_depth");
  expect_400("too_large", "response_format.json_schema.schema", "max_schema_bytes");
  expect_400("unknown_type", "response_format.type", "yaml");
  expect_400("no_name", "response_format.json_schema.name", "name");
  expect_400("no_schema", "response_format.json_schema.schema", "must be an object");
  expect_400("unknown_field", "response_format.schema", "response_format.schema");
  expect_400("guided_json", "guided_json", "response_format");
  expect_400("with_ignore_eos", "ignore_eos", "response_format");
}

}  // namespace
}  // namespace izwi
