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

}  // namespace
}  // namespace izwi
