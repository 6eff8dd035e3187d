// A folder with only a SentencePiece tokenizer.model (no tokenizer.json) loads through
// libsentencepiece: the ids equal spm_encode's (reference.json, written by make_model.sh), BOS is
// added as LlamaTokenizer adds it, decoding gives the text back, and a corrupt file is named.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "common/temp_dir.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

const std::string kDir = std::string(IZWI_TEST_DATA_DIR) + "/tokenizer-sentencepiece-bpe";

TEST(TokenizerSentencePiece, IdsEqualSpmEncodeAndDecodeGivesTheTextBack) {
  const Tokenizer tokenizer = Tokenizer::from_dir(kDir);
  std::ifstream in(kDir + "/reference.json");
  const nlohmann::json reference = nlohmann::json::parse(in);
  ASSERT_GE(reference.at("cases").size(), 10u);
  for (const auto& c : reference.at("cases")) {
    const std::string text = c.at("text");
    const auto ids = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.encode(text), ids) << text;
    std::vector<int32_t> with_bos{1};
    with_bos.insert(with_bos.end(), ids.begin(), ids.end());
    EXPECT_EQ(tokenizer.encode(text, true), with_bos) << text;
    EXPECT_EQ(tokenizer.decode(ids), text);
    EXPECT_EQ(tokenizer.decode(with_bos, true), text);
  }
}

TEST(TokenizerSentencePiece, ControlPiecesAreSpecialTokensOfTheText) {
  const Tokenizer tokenizer = Tokenizer::from_dir(kDir);
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_ids(), std::vector<int32_t>{2});
  EXPECT_TRUE(tokenizer.is_special(1));
  EXPECT_TRUE(tokenizer.is_special(2));
  const std::vector<int32_t> ids = tokenizer.encode("Hello</s>");
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), 2);
  EXPECT_EQ(tokenizer.decode(ids, true), "Hello");
  EXPECT_EQ(tokenizer.token_to_id("\xE2\x96\x81"), tokenizer.encode(" ").front());
  EXPECT_EQ(tokenizer.token_bytes(tokenizer.encode("\xE2\x98\x83").back()), "\x83");  // a byte piece is its byte
}

TEST(TokenizerSentencePiece, CorruptModelIsInvalidFormatNamingTheFile) {
  testing::TempDir dir;
  dir.write("tokenizer.model", "this is not a protobuf");
  try {
    Tokenizer::from_dir(dir.path());
    FAIL() << "loaded a corrupt tokenizer.model";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
    EXPECT_NE(std::string(e.what()).find("tokenizer.model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace izwi
