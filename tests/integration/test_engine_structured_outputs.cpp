// GenerationParams::structured_output through the engine on a random-weight model (which would
// never write valid JSON by chance) at temperature 1: every output that ends parses and validates
// against its schema (an independent validator), in batches mixing constrained and free requests;
// max_tokens reached inside the document finishes with Length; min_tokens, stop ids, logprobs, n
// choices and preemption (recompute) with a constraint; bad schemas and unsupported combinations
// are typed errors naming the field.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json_schema_check.h"
#include "common/reference.h"
#include "common/structured_schema_cases.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

class EngineStructured : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    testing::write_text_model(dir_->path());
    EngineConfig config;
    config.max_batch_size = 64;
    engine_ = new Engine(dir_->path(), config);
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }

  static Request schema_request(const std::string& schema, uint64_t seed, int32_t max_tokens = 256) {
    Request r;
    r.messages = {{"user", "Answer in JSON."}};
    r.params.max_tokens = max_tokens;
    r.params.sampling.temperature = 1.0f;
    r.params.seed = seed;
    r.params.structured_output.kind = StructuredOutput::Kind::JsonSchema;
    r.params.structured_output.json_schema = schema;
    return r;
  }

  // The output, when it ended on its own, parses and validates; returns whether it ended.
  static bool expect_valid(const Output& out, const nlohmann::json& schema, const std::string& where) {
    if (out.finish_reason == FinishReason::Length) return false;
    EXPECT_TRUE(out.finish_reason == FinishReason::Eos || out.finish_reason == FinishReason::Stop) << where;
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(out.text);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": output does not parse (" << e.what() << "): " << out.text;
      return true;
    }
    EXPECT_EQ(testing::json_schema_violation(value, schema), "") << where << ": " << out.text;
    return true;
  }

  static testing::TempDir* dir_;
  static Engine* engine_;
};

testing::TempDir* EngineStructured::dir_ = nullptr;
Engine* EngineStructured::engine_ = nullptr;

TEST_F(EngineStructured, EveryEndedOutputValidatesAtTemperatureOne) {
  // All at once: one batch of every schema under three seeds.
  std::vector<StreamHandle> handles;
  std::vector<std::string> names;
  std::vector<nlohmann::json> schemas;
  for (const testing::SchemaCase& c : testing::kSchemaCases) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      handles.push_back(engine_->generate_streaming(schema_request(c.schema, seed)));
      names.push_back(std::string(c.name) + " seed " + std::to_string(seed));
      schemas.push_back(nlohmann::json::parse(c.schema));
    }
  }
  size_t ended = 0;
  for (size_t i = 0; i < handles.size(); ++i) {
    Output out;
    std::string streamed;
    while (std::optional<StreamChunk> chunk = handles[i].next()) {
      streamed += chunk->text;
      if (chunk->finished) {
        out.finish_reason = chunk->finish_reason;
        ASSERT_NE(chunk->finish_reason, FinishReason::Error) << names[i] << ": " << chunk->error;
      }
    }
    out.text = streamed;
    if (expect_valid(out, schemas[i], names[i])) ++ended;
  }
  // Most documents end well inside the budget (long free strings are what runs out of it).
  EXPECT_GE(ended, handles.size() * 3 / 4) << ended << " of " << handles.size() << " ended";
  std::printf("%zu of %zu constrained outputs ended (the rest reached max_tokens)\n", ended, handles.size());
}

TEST_F(EngineStructured, JsonObjectModeGivesAnObject) {
  for (uint64_t seed : {5u, 6u, 7u, 8u}) {
    Request r = schema_request("", seed);
    r.params.structured_output.kind = StructuredOutput::Kind::JsonObject;
    const Output out = engine_->generate(r);
    if (out.finish_reason == FinishReason::Length) continue;
    const nlohmann::json value = nlohmann::json::parse(out.text);
    EXPECT_TRUE(value.is_object()) << out.text;
  }
}

TEST_F(EngineStructured, MixedBatchLeavesFreeRequestsAsTheyAreAlone) {
  Request free_request;
  free_request.prompt = "hello there";
  free_request.params.max_tokens = 24;
  free_request.params.min_tokens = 24;
  free_request.params.sampling.temperature = 0.0f;
  const Output alone = engine_->generate(free_request);

  const char* schema = R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
                           "required": ["a", "b"], "additionalProperties": false})";
  std::vector<StreamHandle> handles;
  for (int i = 0; i < 4; ++i) {
    handles.push_back(engine_->generate_streaming(schema_request(schema, 100 + i)));
    handles.push_back(engine_->generate_streaming(free_request));
  }
  for (size_t i = 0; i < handles.size(); ++i) {
    std::vector<int32_t> tokens;
    Output out;
    while (std::optional<StreamChunk> chunk = handles[i].next()) {
      tokens.insert(tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
      out.text += chunk->text;
      if (chunk->finished) out.finish_reason = chunk->finish_reason;
    }
    if (i % 2 == 1) {
      EXPECT_EQ(tokens, alone.tokens) << "free request " << i;
    } else {
      EXPECT_TRUE(expect_valid(out, nlohmann::json::parse(schema), "constrained " + std::to_string(i))) << out.text;
    }
  }
}

TEST_F(EngineStructured, EveryChoiceHasItsOwnConstraint) {
  const char* schema = R"({"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 2, "maxItems": 4})";
  Request r = schema_request(schema, 21, 64);
  r.params.n = 4;
  const Output out = engine_->generate(r);
  ASSERT_EQ(out.choices.size(), 4u);
  std::set<std::string> texts;
  for (const Output& choice : out.choices) {
    EXPECT_TRUE(expect_valid(choice, nlohmann::json::parse(schema), "choice " + std::to_string(choice.index)))
        << choice.text;
    texts.insert(choice.text);
  }
  EXPECT_GT(texts.size(), 1u);  // each its own draws, each its own matcher
}

TEST_F(EngineStructured, MaxTokensInsideTheDocumentFinishesWithLength) {
  const char* schema = R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 20}},
                           "required": ["name"]})";
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Output out = engine_->generate(schema_request(schema, seed, 4));
    EXPECT_EQ(out.finish_reason, FinishReason::Length) << out.text;
    EXPECT_EQ(out.tokens.size(), 4u);
    EXPECT_FALSE(nlohmann::json::accept(out.text)) << out.text;
  }
}

TEST_F(EngineStructured, AFinishedDocumentEndsEvenBelowMinTokens) {
  Request r = schema_request(R"({"type": "boolean"})", 9, 64);
  r.params.min_tokens = 64;
  const Output out = engine_->generate(r);
  EXPECT_EQ(out.finish_reason, FinishReason::Eos) << out.text;
  EXPECT_LT(out.tokens.size(), 64u);
  const nlohmann::json value = nlohmann::json::parse(out.text);
  EXPECT_TRUE(value.is_boolean()) << out.text;
}

TEST_F(EngineStructured, StopIdsEndOnlyACompleteDocument) {
  // A special stop id (no text) is allowed exactly where the document may end; a stop id with
  // text ("}") is never drawn, even where the document takes a "}" (its text would follow the
  // document in the output).
  const Tokenizer& tokenizer = *engine_->tokenizer();
  const std::vector<int32_t> brace = tokenizer.encode("}", /*add_special_tokens=*/false);
  ASSERT_EQ(brace.size(), 1u);
  const std::optional<int32_t> im_start = tokenizer.token_to_id("<|im_start|>");
  ASSERT_TRUE(im_start.has_value());
  const char* schema = R"({"type": "object", "properties": {"v": {"type": "integer", "minimum": 0, "maximum": 9}},
                           "required": ["v"], "additionalProperties": false})";
  int stopped = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Request r = schema_request(schema, seed, 64);
    r.params.stop_token_ids = {*im_start, brace[0]};
    const Output out = engine_->generate(r);
    ASSERT_NE(out.finish_reason, FinishReason::Length) << out.text;
    EXPECT_EQ(std::count(out.tokens.begin(), out.tokens.end(), brace[0]), 0) << out.text;
    if (out.finish_reason == FinishReason::Stop) {
      ++stopped;
      EXPECT_EQ(out.tokens.back(), *im_start);
    }
    const nlohmann::json value = nlohmann::json::parse(out.text);
    EXPECT_EQ(testing::json_schema_violation(value, nlohmann::json::parse(schema)), "") << out.text;
  }
  std::printf("%d of 12 ended on the special stop id, the others on EOS\n", stopped);
}

TEST_F(EngineStructured, LogprobsAreOfTheMaskedDistribution) {
  Request r = schema_request(R"({"enum": ["alpha", "beta", "gamma"]})", 4, 32);
  r.params.logprobs = 20;
  const Output out = engine_->generate(r);
  ASSERT_EQ(out.logprobs.size(), out.tokens.size());
  for (const TokenLogprob& t : out.logprobs) {
    EXPECT_TRUE(std::isfinite(t.logprob));
    double mass = 0;
    for (const auto& [id, logprob] : t.top) {
      EXPECT_TRUE(std::isfinite(logprob)) << "a masked id listed as an alternative";
      mass += std::exp(logprob);
    }
    // After the mask the allowed ids carry all the mass; few are allowed, so the top 20 hold it.
    if (t.top.size() < 20) EXPECT_NEAR(mass, 1.0, 1e-4);
  }
}

TEST_F(EngineStructured, BadSchemasAreTypedErrorsNamingTheKeyword) {
  const auto expect_error = [](const Request& r, ErrorCode code, const std::string& words) {
    try {
      (void)engine_->generate(r);
      ADD_FAILURE() << "no error for " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("structured_output"), std::string::npos) << e.what();
    }
  };
  expect_error(schema_request(R"({"type": "string", "not": {"const": "x"}})", 1), ErrorCode::Unsupported, "'not'");
  std::string deep = R"({"type": "integer"})";
  for (int i = 0; i < 40; ++i) deep = R"({"type": "array", "items": )" + deep + "}";
  expect_error(schema_request(deep, 1), ErrorCode::InvalidArgument, "max_depth");
  std::string large = R"({"enum": [)";
  for (int i = 0; i < 30000; ++i) large += (i ? "," : "") + std::string("\"value-") + std::to_string(i) + "\"";
  expect_error(schema_request(large + "]}", 1), ErrorCode::InvalidArgument, "max_schema_bytes");
  expect_error(schema_request("{\"type\": ", 1), ErrorCode::InvalidArgument, "not valid JSON");
  Request ignore = schema_request(R"({"type": "boolean"})", 1);
  ignore.params.ignore_eos = true;
  expect_error(ignore, ErrorCode::InvalidArgument, "ignore_eos");
  EXPECT_THROW(validate_structured_output({StructuredOutput::Kind::JsonSchema, R"({"allOf": []})"}), Error);
  EXPECT_NO_THROW(validate_structured_output({StructuredOutput::Kind::JsonSchema, R"({"type": "integer"})"}));
}

TEST(EngineStructuredUnderPreemption, RecomputedRequestsKeepTheirDocument) {
  // A pool too small for the batch: requests are preempted and recomputed mid-document; each
  // matcher must see every token once (a token fed twice or skipped would break the document).
  testing::TempDir dir;
  testing::write_text_model(dir.path());
  EngineConfig config;
  config.max_batch_size = 8;
  config.block_size = 4;
  config.num_kv_blocks = 48;
  Engine engine(dir.path(), config);
  const char* schema = R"({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 99},
                           "minItems": 4, "maxItems": 4})";
  std::vector<StreamHandle> handles;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Request r;
    r.messages = {{"user", "numbers"}};
    r.params.max_tokens = 150;
    r.params.sampling.temperature = 1.0f;
    r.params.seed = seed;
    r.params.structured_output = {StructuredOutput::Kind::JsonSchema, schema};
    handles.push_back(engine.generate_streaming(r));
  }
  int ended = 0;
  for (StreamHandle& handle : handles) {
    std::string text;
    FinishReason finish = FinishReason::None;
    while (std::optional<StreamChunk> chunk = handle.next()) {
      text += chunk->text;
      if (chunk->finished) finish = chunk->finish_reason;
    }
    ASSERT_TRUE(finish == FinishReason::Eos || finish == FinishReason::Length) << to_string(finish) << ": " << text;
    if (finish == FinishReason::Length) continue;  // whitespace ran out the budget (a random model likes it)
    ++ended;
    EXPECT_EQ(testing::json_schema_violation(nlohmann::json::parse(text), nlohmann::json::parse(schema)), "") << text;
  }
  EXPECT_GE(ended, 4);
  EXPECT_GT(engine.metrics().preemptions, 0u) << "the pool should have forced preemptions";
}

TEST(EngineStructuredWithoutTokenizer, IsRefusedNamingTheField) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  Request r;
  r.prompt_ids = {1, 2, 3};
  r.params.max_tokens = 4;
  r.params.structured_output.kind = StructuredOutput::Kind::JsonObject;
  try {
    (void)engine.generate(r);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("params.structured_output needs a tokenizer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace izwi
