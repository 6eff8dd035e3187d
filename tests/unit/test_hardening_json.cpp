// JSON read by izwi: nesting depth is bounded before a DOM is built, and integers that do not fit
// their field are errors naming the field rather than silently wrapped values.

#include <gtest/gtest.h>

#include <string>

#include "common/error_message.h"
#include "common/json_fields.h"
#include "common/temp_dir.h"
#include "io/hf_config.h"
#include "io/safetensors.h"
#include "izwi/config.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;

std::string nested_objects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  s.append(static_cast<size_t>(depth), '}');
  return s;
}

std::string nested_arrays(int depth) {
  return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
}

TEST(HardeningJson, DeepFileIsInvalidFormat) {
  TempDir dir;
  for (const std::string& doc : {nested_objects(50000), nested_arrays(50000)}) {
    const std::string path = dir.write("config.json", doc);
    const std::string message = error_message([&] { read_json_file(path); });
    EXPECT_EQ(error_code_of([&] { read_json_file(path); }), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find("config.json"), std::string::npos) << message;
    EXPECT_NE(message.find("nesting depth"), std::string::npos) << message;
    EXPECT_EQ(error_code_of([&] { HfConfig::load(dir.path()); }), ErrorCode::InvalidFormat);
  }
}

TEST(HardeningJson, DeepEngineConfigIsInvalidFormat) {
  const std::string message = error_message([] { EngineConfig::from_json_string(nested_objects(50000), "deep.json"); });
  EXPECT_EQ(error_code_of([] { EngineConfig::from_json_string(nested_objects(50000), "deep.json"); }),
            ErrorCode::InvalidFormat);
  EXPECT_NE(message.find("deep.json"), std::string::npos) << message;
  EXPECT_NE(message.find("nesting depth"), std::string::npos) << message;
}

TEST(HardeningJson, DepthLimitCountsOnlyBracketsOutsideStrings) {
  TempDir dir;
  // Brackets inside strings (and escaped quotes) do not nest.
  const std::string brackets(100000, '[');
  const std::string path = dir.write("ok.json", "{\"s\": \"\\\"" + brackets + "\", \"t\": [[1]]}");
  EXPECT_EQ(read_json_file(path).at("t").size(), 1u);
  // Exactly the limit (kMaxJsonDepth, 512) is fine; one more is not.
  dir.write("limit.json", nested_arrays(512));
  EXPECT_NO_THROW(read_json_file(dir.file("limit.json")));
  dir.write("over.json", nested_arrays(512 + 1));
  EXPECT_EQ(error_code_of([&] { read_json_file(dir.file("over.json")); }), ErrorCode::InvalidFormat);
}

TEST(HardeningJson, DeepSafetensorsHeaderIsInvalidFormat) {
  const std::string header = "{\"t\": " + nested_objects(50000) + "}";
  std::string bytes = testing::safetensors_bytes(header, "");
  size_t offset = 0;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const std::string message =
      error_message([&] { parse_safetensors(data, bytes.size(), "deep.safetensors", &offset); });
  EXPECT_EQ(error_code_of([&] { parse_safetensors(data, bytes.size(), "deep.safetensors", &offset); }),
            ErrorCode::InvalidFormat);
  EXPECT_NE(message.find("nesting depth"), std::string::npos) << message;
}

}  // namespace
}  // namespace izwi
