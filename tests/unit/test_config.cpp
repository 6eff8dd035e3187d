#include <gtest/gtest.h>

#include <functional>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "io/hf_config.h"
#include "izwi/config.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::error_message;

TEST(EngineConfig, DefaultsMatchTheSeedEngine) {
  EngineConfig c;
  EXPECT_EQ(c.block_size, 16);
  EXPECT_EQ(c.max_batch_size, 8);
  EXPECT_EQ(c.max_tokens_per_step, 512);
  EXPECT_TRUE(c.enable_chunked_prefill);
  EXPECT_TRUE(c.enable_preemption);
  EXPECT_EQ(c.policy, SchedulingPolicy::Fcfs);
  EXPECT_NO_THROW(c.validate());
}

TEST(EngineConfig, ReadsJsonAndRejectsBadFields) {
  EngineConfig c = EngineConfig::from_json_string(
      R"({"max_batch_size": 4, "policy": "priority", "block_size": 32, "enable_prefix_cache": false})");
  EXPECT_EQ(c.max_batch_size, 4);
  EXPECT_EQ(c.policy, SchedulingPolicy::Priority);
  EXPECT_EQ(c.block_size, 32);
  EXPECT_FALSE(c.enable_prefix_cache);
  EXPECT_EQ(c.max_tokens_per_step, 512);

  EXPECT_NE(error_message([] {
              EngineConfig::from_json_string(R"({"max_batch": 4})", "cfg.json");
            }).find("cfg.json: unknown field 'max_batch'"),
            std::string::npos);
  EXPECT_NE(error_message([] {
              EngineConfig::from_json_string(R"({"max_batch_size": "8"})");
            }).find("'max_batch_size' has type string"),
            std::string::npos);
  EXPECT_NE(
      error_message([] { EngineConfig::from_json_string(R"({"block_size": 0})"); }).find("EngineConfig.block_size"),
      std::string::npos);
  EXPECT_NE(error_message([] { EngineConfig::from_json_string(R"({"policy": "lifo"})"); }).find("'policy' is 'lifo'"),
            std::string::npos);
  EXPECT_NE(error_message([] { EngineConfig::from_json_string("[1]"); }).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(error_message([] { EngineConfig::from_json_file("/missing.json"); }).find("/missing.json"),
            std::string::npos);
  EngineConfig bad;
  bad.dtype = "int4";
  EXPECT_NE(error_message([&] { bad.validate(); }).find("EngineConfig.dtype"), std::string::npos);
  bad = EngineConfig{};
  bad.max_tokens_per_step = 4;
  EXPECT_NE(error_message([&] { bad.validate(); }).find("max_tokens_per_step"), std::string::npos);
}

TEST(HfConfig, RopeSettingsInBothStyles) {
  nlohmann::json modern = nlohmann::json::parse(R"({"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0,
    "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}})");
  RopeConfig a = read_rope_config(JsonFields(modern, "modern"));
  nlohmann::json legacy = nlohmann::json::parse(R"({"rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3",
    "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}})");
  RopeConfig b = read_rope_config(JsonFields(legacy, "legacy"));
  for (const RopeConfig& r : {a, b}) {
    EXPECT_EQ(r.type, "llama3");
    EXPECT_EQ(r.theta, 500000.0);
    EXPECT_EQ(r.factor, 8.0);
    EXPECT_EQ(r.original_max_positions, 64);
  }
  nlohmann::json plain = nlohmann::json::parse(R"({"rope_theta": 1000.0, "rope_scaling": null})");
  EXPECT_EQ(read_rope_config(JsonFields(plain, "plain")).type, "default");
  EXPECT_EQ(read_rope_config(JsonFields(plain, "plain")).theta, 1000.0);
  nlohmann::json incomplete = nlohmann::json::parse(R"({"rope_parameters": {"rope_type": "llama3", "factor": 8.0}})");
  EXPECT_NE(
      error_message([&] { read_rope_config(JsonFields(incomplete, "cfg")); }).find("'low_freq_factor' is missing"),
      std::string::npos);
}

TEST(HfConfig, TokenIdsMayBeIntListOrNull) {
  nlohmann::json j = nlohmann::json::parse(R"({"a": 2, "b": [2, 7], "c": null, "d": "x"})");
  JsonFields f(j, "cfg");
  EXPECT_EQ(read_token_ids(f, "a"), std::vector<int32_t>{2});
  EXPECT_EQ(read_token_ids(f, "b"), (std::vector<int32_t>{2, 7}));
  EXPECT_TRUE(read_token_ids(f, "c").empty());
  EXPECT_TRUE(read_token_ids(f, "missing").empty());
  EXPECT_NE(error_message([&] { read_token_ids(f, "d"); }).find("field 'd'"), std::string::npos);
}

}  // namespace
}  // namespace izwi
