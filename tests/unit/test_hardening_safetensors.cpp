// Safetensors headers must not name a tensor twice (the format forbids it; a JSON DOM would keep
// only the last entry and silently drop the other).

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;

TEST(HardeningSafetensors, DuplicateTensorNameIsInvalidFormat) {
  // Identical entries (the repeat was silently accepted) and distinct ones (the first was dropped).
  for (const auto& [second, data_bytes] : std::vector<std::pair<std::string, size_t>>{{"[0, 4]", 4}, {"[4, 8]", 8}}) {
    const std::string header = R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                               R"( "w": {"dtype": "F32", "shape": [1], "data_offsets": )" +
                               second + "}}";
    const std::string bytes = testing::safetensors_bytes(header, std::string(data_bytes, '\0'));
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    size_t offset = 0;
    auto parse = [&] { parse_safetensors(data, bytes.size(), "dup.safetensors", &offset); };
    const std::string message = error_message(parse);
    EXPECT_EQ(error_code_of(parse), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find("dup.safetensors"), std::string::npos) << message;
    EXPECT_NE(message.find("tensor 'w' appears more than once"), std::string::npos) << message;
  }
}

TEST(HardeningSafetensors, DuplicateKeyInsideAnEntryIsInvalidFormat) {
  const std::string header = R"({"w": {"dtype": "F16", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
  const std::string bytes = testing::safetensors_bytes(header, std::string(4, '\0'));
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t offset = 0;
  EXPECT_EQ(error_code_of([&] { parse_safetensors(data, bytes.size(), "dup.safetensors", &offset); }),
            ErrorCode::InvalidFormat);
}

TEST(HardeningSafetensors, DistinctNamesStillParse) {
  const std::string header =
      R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
      R"( "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";
  const std::string bytes = testing::safetensors_bytes(header, std::string(8, '\0'));
  size_t offset = 0;
  EXPECT_EQ(parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "ok", &offset).size(), 2u);
}

}  // namespace
}  // namespace izwi
