#include <gtest/gtest.h>

#include <cstring>

#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::safetensors_bytes;

// Parses bytes and returns the error message ("" if it parsed).
std::string parse_error(const std::string& bytes) {
  size_t offset = 0;
  try {
    parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.safetensors", &offset);
  } catch (const Error& e) {
    EXPECT_EQ(e.code() == ErrorCode::InvalidFormat || e.code() == ErrorCode::Unsupported, true) << e.what();
    return e.what();
  }
  return "";
}

std::string header_with(const std::string& entry) { return "{\"t\": " + entry + "}"; }

TEST(Safetensors, ParsesAValidFile) {
  const std::string bytes =
      testing::f32_safetensors({{"a", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"b", {0}, {}}, {"c", {}, {7}}});
  size_t offset = 0;
  auto tensors = parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "ok", &offset);
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(parse_error(bytes), "");
  testing::TempDir dir;
  SafetensorsFile file(dir.write("m.safetensors", bytes));
  const StTensorInfo* a = file.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  float first = 0;
  std::memcpy(&first, file.data(*a), sizeof(float));
  EXPECT_EQ(first, 1.0f);
  EXPECT_EQ(file.find("c")->numel(), 1);  // scalar
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(Safetensors, RejectsMalformedFilesWithClearErrors) {
  const std::string eight(8, 'x');
  struct Case {
    const char* what;
    std::string bytes;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"empty", "", "too short"},
      {"short", "abc", "too short"},
      {"header past end", safetensors_bytes("{}", "").substr(0, 8) + std::string("{"), "runs past the end"},
      {"huge header length", std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "exceeds"},
      {"header length wraps", std::string("\xf9\xff\xff\xff\xff\xff\xff\xff", 8) + "{}", "exceeds"},
      {"not json", safetensors_bytes("not json", ""), "not valid UTF-8 JSON"},
      {"not an object", safetensors_bytes("[1,2]", ""), "not a JSON object"},
      {"invalid utf8", safetensors_bytes("{\"\xff\xfe\": 1}", ""), "not valid UTF-8 JSON"},
      {"entry not object", safetensors_bytes(header_with("3"), ""), "entry is not an object"},
      {"unknown dtype", safetensors_bytes(header_with(R"({"dtype":"F8","shape":[1],"data_offsets":[0,1]})"), "x"),
       "unsupported dtype"},
      {"negative dim", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), "xxxx"),
       "non-negative"},
      {"shape overflow",
       safetensors_bytes(header_with(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]})"), ""),
       "overflows"},
      {"byte size overflow",
       safetensors_bytes(header_with(R"({"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]})"), ""),
       "overflows"},
      {"span mismatch", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), "xxxx"),
       "need 8 bytes"},
      {"end before begin",
       safetensors_bytes(header_with(R"({"dtype":"F32","shape":[0],"data_offsets":[4,0]})"), "xxxx"),
       "end 0 < begin 4"},
      {"offsets missing", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[1]})"), "xxxx"), "data_offsets"},
      {"gap", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), eight), "gap"},
      {"overlap",
       safetensors_bytes(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           eight),
       "overlap"},
      {"truncated data", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), "xxxx"),
       "truncated"},
      {"trailing bytes", safetensors_bytes(header_with(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})"), eight),
       "trailing"},
      {"offset beyond file",
       safetensors_bytes(header_with(R"({"dtype":"U8","shape":[1],"data_offsets":[1000000,1000001]})"), "x"), "gap"},
      {"bad metadata", safetensors_bytes(R"({"__metadata__": 5})", ""), "__metadata__"},
  };
  for (const Case& c : cases) {
    const std::string message = parse_error(c.bytes);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": got '" << message << "'";
    EXPECT_NE(message.find("test.safetensors"), std::string::npos) << c.what << ": error does not name the file";
  }
}

TEST(Safetensors, MissingFileIsNotFound) {
  try {
    SafetensorsFile file("/nonexistent/model.safetensors");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.safetensors"), std::string::npos);
  }
}

}  // namespace
}  // namespace izwi
