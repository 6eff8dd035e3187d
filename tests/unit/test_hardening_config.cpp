// Config values that do not fit: token ids beyond int32, integers wider than their field, engine
// sizes without an upper bound, model sizes that would allocate before failing.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "io/hf_config.h"
#include "izwi/config.h"
#include "izwi/engine.h"
#include "izwi/errors.h"
#include "models/lfm2.h"
#include "models/llama.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;

void expect_error(const std::function<void()>& fn, ErrorCode code, const std::vector<std::string>& parts) {
  const std::string message = error_message(fn);
  EXPECT_EQ(error_code_of(fn), code) << message;
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

// ---- token ids ----------------------------------------------------------------------------

TEST(HardeningTokenIds, IdsOutsideInt32AreInvalidFormat) {
  for (const char* doc :
       {R"({"eos_token_id": 4294967299})", R"({"eos_token_id": [2, 4294967299]})", R"({"eos_token_id": -1})",
        R"({"eos_token_id": 2147483648})", R"({"eos_token_id": 18446744073709551615})"}) {
    const nlohmann::json j = nlohmann::json::parse(doc);
    const JsonFields f(j, "config.json");
    expect_error([&] { read_token_ids(f, "eos_token_id"); }, ErrorCode::InvalidFormat, {"config.json", "eos_token_id"});
  }
  const nlohmann::json ok = nlohmann::json::parse(R"({"eos_token_id": [0, 2147483647]})");
  EXPECT_EQ(read_token_ids(JsonFields(ok, "cfg"), "eos_token_id"), (std::vector<int32_t>{0, 2147483647}));
}

// ---- integer narrowing ----------------------------------------------------------------------

TEST(HardeningEngineConfig, IntegerThatDoesNotFitIsInvalidFormat) {
  expect_error([] { EngineConfig::from_json_string(R"({"max_batch_size": 4294967297})", "engine.json"); },
               ErrorCode::InvalidFormat, {"engine.json", "max_batch_size", "4294967297"});
  expect_error([] { EngineConfig::from_json_string(R"({"num_threads": -4294967296})", "engine.json"); },
               ErrorCode::InvalidFormat, {"num_threads"});
  expect_error([] { EngineConfig::from_json_string(R"({"block_size": 18446744073709551615})", "engine.json"); },
               ErrorCode::InvalidFormat, {"block_size"});
  // The generic accessor: unsigned fields reject negatives, narrow fields reject wide values.
  const nlohmann::json j = nlohmann::json::parse(R"({"neg": -1, "big": 300, "ok": 7})");
  const JsonFields f(j, "f.json");
  expect_error([&] { f.get<uint32_t>("neg"); }, ErrorCode::InvalidFormat, {"f.json", "'neg'"});
  expect_error([&] { f.get<int8_t>("big"); }, ErrorCode::InvalidFormat, {"'big'"});
  EXPECT_EQ(f.get<uint8_t>("ok"), 7);
  EXPECT_EQ(f.get<int64_t>("neg"), -1);
}

// ---- EngineConfig upper bounds ----------------------------------------------------------------

TEST(HardeningEngineConfig, SizeFieldsHaveUpperBounds) {
  auto expect_field = [](const std::function<void(EngineConfig&)>& set, const std::string& field,
                         const std::string& bound) {
    EngineConfig c;
    set(c);
    expect_error([&] { c.validate(); }, ErrorCode::InvalidArgument, {"EngineConfig." + field, bound});
  };
  expect_field([](EngineConfig& c) { c.num_threads = 100000; }, "num_threads", "1024");
  expect_field(
      [](EngineConfig& c) {
        c.max_batch_size = 5000;
        c.max_tokens_per_step = 8192;
      },
      "max_batch_size", "4096");
  expect_field([](EngineConfig& c) { c.max_tokens_per_step = 2000000; }, "max_tokens_per_step", "1048576");
  expect_field([](EngineConfig& c) { c.max_seq_len = 20000000; }, "max_seq_len", "16777216");
  expect_field([](EngineConfig& c) { c.block_size = 5000; }, "block_size", "1024");
  expect_field([](EngineConfig& c) { c.num_kv_blocks = 2000000000; }, "num_kv_blocks", "2147483647");
  expect_error([] { EngineConfig::from_json_string(R"({"num_threads": 100000})", "engine.json"); },
               ErrorCode::InvalidArgument, {"num_threads"});
  EngineConfig at_limits;
  at_limits.num_threads = 1024;
  at_limits.max_batch_size = 4096;
  at_limits.max_tokens_per_step = 1 << 20;
  at_limits.max_seq_len = 1 << 24;
  at_limits.block_size = 1024;
  at_limits.num_kv_blocks = (1 << 21) - 1;
  EXPECT_NO_THROW(at_limits.validate());
}

}  // namespace
}  // namespace izwi
