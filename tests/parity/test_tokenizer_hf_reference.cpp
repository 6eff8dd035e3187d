// izwi's tokenizer.json support against the Hugging Face tokenizers library itself: for each
// fixture (tests/data/tokenizer-hf-*, written by tests/data/tokenizer-hf-components/
// make_tokenizers.py, and the byte-level fixtures), the reference ids and decoded texts are
// computed at test time by tests/parity/tokenizers_js/reference.js (the Rust library through the
// pinned @anush008/tokenizers Node binding; cmake/install_deps.sh installs it), and izwi must
// give the same ids (with and without special tokens) and the same decoded text, also when the
// ids are decoded one at a time (IncrementalDetokenizer).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

const std::vector<std::string>& cases() {
  static const std::vector<std::string> texts = {
      "",
      " ",
      "   ",
      "Hello world",
      "Hello  world",
      " leading space",
      "  two leading spaces",
      "trailing space ",
      "trailing spaces   ",
      "The quick brown fox jumps over the lazy dog.",
      "tokenizer decoder numbers text again",
      "UPPER lower MiXeD CamelCase snake_case kebab-case",
      "don't stop, we'll win, they're sure, I'm here, you've seen, he'd go",
      "DON'T SHOUT — I'LL WIN",
      "12345 67.89 1,000,000 3.14159 2024-06-01 0x1F",
      "a1b2c3 v2.0.1 x86_64",
      "tab\there\nnewline\r\nwindows\n\n\ndouble",
      "\n leading newline",
      "spaces    between\t\twords \t mixed",
      "\xC2\xA0no-break\xE2\x80\x83"
      "em space\xE3\x80\x80ideographic",
      "caf\xC3\xA9 cafe\xCC\x81 na\xC3\xAFve \xC3\x9C"
      "berma\xC3\x9F",
      "\xEF\xAC\x81 ligature \xE2\x91\xA0 circled \xC2\xB2 superscript \xE2\x85\xA7 roman",
      "\xC4\xB0stanbul \xCE\xA3\xCE\xB9\xCF\x83\xCF\x8D\xCF\x86\xCE\xBF\xCF\x82",
      "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF\xE6\x97\xA5\xE6\x9C\xAC\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xA7\xE3"
      "\x81\x99\xE3\x80\x82",
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xE4\xB8\xAD\xE6\x96\x87 "
      "\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6\xE0\xA5\x80",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBA\xD0\xB0\xD0\xBA \xD0\xB4\xD0\xB5\xD0\xBB\xD0\xB0?",
      "emoji \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD "
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 flags "
      "\xF0\x9F\x87\xAF\xF0\x9F\x87\xB5",
      "unknown \xE2\x98\x83 chars \xE2\x99\x9E and \xF0\x90\x8D\x88 gothic",
      "math: x\xC2\xB2 + y\xC2\xB2 = z\xC2\xB2, \xE2\x88\x80x \xE2\x88\x88 \xE2\x84\x9D",
      "punctuation!!! ...??? (brackets) [square] {curly} \"quotes\" 'single' \xE2\x80\x9Csmart\xE2\x80\x9D",
      "email: someone@example.com url: https://example.com/path?query=1&x=2#frag",
      "def encode(self, text): return [self.vocab[t] for t in text.split()]",
      "    indented code   with   runs of   spaces",
      "\xE2\x96\x81"
      "already metaspace\xE2\x96\x81\xE2\x96\x81 inside",
      "<s>special at start",
      "text <s> in the middle </s> and end</s>",
      "<|im_start|>user\nhi<|im_end|>",
      "<|endoftext|>",
      "[UNK] literal unk",
      "eeee eel tree eeee-e",
      "zero\xE2\x80\x8Bwidth\xE2\x80\x8Cnon-joiner\xE2\x80\x8Djoiner",
      "control \x01\x02\x7F chars",
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "A tokenizer turns text into numbers, and a decoder turns the numbers back into text again. In 2024 the "
      "model read 1,234,567 tokens per second \xE2\x80\x94 faster than the 2023 version (987 tokens/s).",
  };
  return texts;
}

std::string run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[65536];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) throw std::runtime_error("'" + command + "' failed (status " + std::to_string(status) + "): " + out);
  return out;
}

class TokenizerHfReference : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerHfReference, IdsAndDecodedTextEqualTheTokenizersLibrary) {
  namespace fs = std::filesystem;
  const std::string js_dir = IZWI_TOKENIZERS_JS_DIR;
  ASSERT_TRUE(fs::exists(js_dir + "/node_modules/@anush008/tokenizers"))
      << "the reference library is not installed: run cmake/install_deps.sh (npm ci in " << js_dir << ")";
  const std::string dir = std::string(IZWI_TEST_DATA_DIR) + "/" + GetParam();
  // A directory of its own: ctest runs the parity suite in several processes at once (one per
  // kernel variant), which would otherwise write and remove one shared file under each other.
  const testing::TempDir temp;
  const std::string cases_file = temp.write("cases.json", nlohmann::json(cases()).dump());
  const nlohmann::json reference = nlohmann::json::parse(
      run(std::string(IZWI_NODE) + " " + js_dir + "/reference.js " + dir + "/tokenizer.json " + cases_file));
  ASSERT_EQ(reference.at("cases").size(), cases().size());

  const Tokenizer tokenizer = Tokenizer::from_dir(dir);
  for (const auto& c : reference.at("cases")) {
    const std::string text = c.at("text");
    const auto ids = c.at("ids").get<std::vector<int32_t>>();
    const auto ids_special = c.at("ids_special").get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.encode(text, false), ids) << "text: '" << text << "'";
    EXPECT_EQ(tokenizer.encode(text, true), ids_special) << "text (add_special_tokens): '" << text << "'";
    EXPECT_EQ(tokenizer.decode(ids), c.at("decoded").get<std::string>()) << "text: '" << text << "'";
    EXPECT_EQ(tokenizer.decode(ids_special), c.at("decoded_special").get<std::string>()) << "text: '" << text << "'";
    EXPECT_EQ(tokenizer.decode(ids_special, true), c.at("decoded_skip").get<std::string>())
        << "text (skip_special_tokens): '" << text << "'";
    // Streaming gives the same text (the fixture without a decoder joins tokens with spaces,
    // which token-by-token output cannot do).
    if (GetParam() == "tokenizer-hf-digits") continue;
    for (const bool skip : {false, true}) {
      IncrementalDetokenizer stream(tokenizer, skip);
      std::string streamed;
      for (int32_t id : ids_special) streamed += stream.push(id);
      streamed += stream.finish();
      EXPECT_EQ(streamed, c.at(skip ? "decoded_skip" : "decoded_special").get<std::string>())
          << "streamed text (skip_special_tokens " << skip << "): '" << text << "'";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerHfReference,
                         ::testing::Values("tokenizer-hf-spm-llama2", "tokenizer-hf-spm-metaspace",
                                           "tokenizer-hf-spm-gemma", "tokenizer-hf-spm-first-split",
                                           "tokenizer-hf-spm-unk", "tokenizer-hf-o200k", "tokenizer-hf-words",
                                           "tokenizer-hf-splits", "tokenizer-hf-digits", "tokenizer-llama3-style",
                                           "tokenizer-qwen2-style"),
                         [](const auto& info) { return testing::fixture_test_name(info.param); });

}  // namespace
}  // namespace izwi
