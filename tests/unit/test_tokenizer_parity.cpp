// Encode ids and decoded text of every reference case, identical to the reference
// implementation (Hugging Face tokenizers for the byte-level BPE fixtures, the generator's
// tiktoken-style merge for the Tekken fixture).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "common/reference.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

class TokenizerParity : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerParity, EveryReferenceCaseEncodesAndDecodesIdentically) {
  const std::string dir = std::string(IZWI_TEST_DATA_DIR) + "/" + GetParam();
  const Tokenizer tokenizer = Tokenizer::from_dir(dir);
  std::ifstream in(dir + "/reference.json");
  const nlohmann::json reference = nlohmann::json::parse(in);
  ASSERT_GE(reference.at("cases").size(), 17u);
  for (const auto& c : reference.at("cases")) {
    const std::string text = c.at("text");
    const auto expected = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.encode(text), expected) << "text: " << text;
    EXPECT_EQ(tokenizer.decode(expected), c.at("decoded").get<std::string>()) << "text: " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerParity,
                         ::testing::Values("tokenizer-qwen2-style", "tokenizer-llama3-style", "tokenizer-tekken-small"),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

}  // namespace
}  // namespace izwi
