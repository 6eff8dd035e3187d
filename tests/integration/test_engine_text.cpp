// Text in and out through the engine: text prompts and chat messages tokenized on the caller's
// thread, output text equal to the tokenizer's decode, streamed text deltas that concatenate to
// it, and stop strings matched across token boundaries and left out of the text.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

class EngineText : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    engine_ = new Engine(testing::write_text_model(dir_->path()));
  }
  static void TearDownTestSuite() {
    delete engine_;
    delete dir_;
  }

  static Request text_request(const std::string& prompt, int32_t tokens = 24) {
    Request r;
    r.prompt = prompt;
    r.params.max_tokens = tokens;
    r.params.min_tokens = tokens;  // random weights: keep EOS from ending the text early
    return r;
  }

  static std::string streamed_text(const Request& r, StreamChunk* last) {
    StreamHandle handle = engine_->generate_streaming(r);
    std::string text;
    while (std::optional<StreamChunk> chunk = handle.next()) {
      text += chunk->text;
      if (chunk->finished) *last = *chunk;
    }
    return text;
  }

  static testing::TempDir* dir_;
  static Engine* engine_;
};

testing::TempDir* EngineText::dir_ = nullptr;
Engine* EngineText::engine_ = nullptr;

TEST_F(EngineText, TextPromptIsTokenizedLikeTheTokenizer) {
  const Tokenizer* tokenizer = engine_->tokenizer();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_TRUE(engine_->model_info().has_tokenizer);
  const Request by_text = text_request("The quick brown fox, 2 times: caf\xC3\xA9!");
  Request by_ids = by_text;
  by_ids.prompt.clear();
  by_ids.prompt_ids = tokenizer->encode(by_text.prompt, true);
  const Output a = engine_->generate(by_text);
  const Output b = engine_->generate(by_ids);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_FALSE(a.text.empty());
  EXPECT_EQ(a.text, tokenizer->decode(a.tokens, /*skip_special_tokens=*/true));
  EXPECT_EQ(a.text, b.text);
}

TEST_F(EngineText, StreamedDeltasConcatenateToTheText) {
  const Request r = text_request("Streaming text, one delta at a time.", 40);
  const Output whole = engine_->generate(r);
  StreamChunk last;
  EXPECT_EQ(streamed_text(r, &last), whole.text);
  EXPECT_EQ(last.finish_reason, FinishReason::Length);
  EXPECT_EQ(testing::check_idle(*engine_), "");
}

TEST_F(EngineText, StopStringAcrossATokenBoundaryEndsTheText) {
  const Tokenizer& tokenizer = *engine_->tokenizer();
  Request r = text_request("Once upon a time", 40);
  const Output whole = engine_->generate(r);
  const std::string& text = whole.text;
  // A two-byte ASCII stop string whose bytes come from two different tokens.
  std::string stop;
  for (size_t i = 1; i + 1 < whole.tokens.size() && stop.empty(); ++i) {
    const std::string head = tokenizer.decode({whole.tokens.begin(), whole.tokens.begin() + i}, true);
    const size_t b = head.size();
    if (b == 0 || b >= text.size() || text.compare(0, b, head) != 0) continue;
    const auto ascii_printable = [](char c) { return c > ' ' && c < 127; };
    if (ascii_printable(text[b - 1]) && ascii_printable(text[b])) stop = text.substr(b - 1, 2);
  }
  ASSERT_FALSE(stop.empty()) << "no ASCII token boundary in: " << text;
  RecordProperty("stop", stop);
  const std::string expected = text.substr(0, text.find(stop));

  r.params.stop = {"never appears \x01", stop};
  const Output out = engine_->generate(r);
  EXPECT_EQ(out.finish_reason, FinishReason::Stop);
  EXPECT_EQ(out.text, expected);
  EXPECT_LT(out.tokens.size(), whole.tokens.size());
  StreamChunk last;
  EXPECT_EQ(streamed_text(r, &last), expected);
  EXPECT_EQ(last.finish_reason, FinishReason::Stop);
  EXPECT_EQ(testing::check_idle(*engine_), "");
}

TEST_F(EngineText, HeldBackTextIsReleasedWhenNoStopStringFollows) {
  Request r = text_request("Once upon a time", 30);
  const Output whole = engine_->generate(r);
  ASSERT_FALSE(whole.text.empty());
  // Each occurrence of the text's last character could start this stop string, which never
  // completes: that text is held back, then released with the next chunk or at the end.
  r.params.stop = {whole.text.substr(whole.text.size() - 1) + "\x01\x02"};
  StreamChunk last;
  EXPECT_EQ(streamed_text(r, &last), whole.text);
  EXPECT_EQ(last.finish_reason, FinishReason::Length);
}

TEST_F(EngineText, ChatMessagesUseTheModelsTemplate) {
  const Tokenizer& tokenizer = *engine_->tokenizer();
  Request chat;
  chat.messages = {{"system", "Be brief."}, {"user", "Hello there"}};
  chat.params.max_tokens = 8;
  chat.params.min_tokens = 8;
  Request ids = chat;
  ids.messages.clear();
  ids.prompt_ids = tokenizer.encode_chat(chat.messages);
  EXPECT_EQ(tokenizer.apply_chat_template(chat.messages).rfind("<|im_start|>assistant\n"),
            tokenizer.apply_chat_template(chat.messages).size() - 22);
  EXPECT_EQ(engine_->generate(chat).tokens, engine_->generate(ids).tokens);
}

// A folder with its own Jinja template (Qwen3's): Request::chat's tools and template_kwargs reach
// it, and a template that raises fails the request with a typed error naming template and line.
TEST(EngineChatTemplate, RequestChatOptionsReachTheFoldersTemplate) {
  testing::TempDir dir;
  testing::write_text_model(dir.path());
  std::ifstream jinja(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/Qwen-Qwen3-0.6B.jinja");
  std::stringstream text;
  text << jinja.rdbuf();
  dir.write("chat_template.jinja", text.str());
  Engine engine(dir.path());
  const Tokenizer& tokenizer = *engine.tokenizer();
  Request chat;
  chat.messages = {{"user", "Weather?"}};
  chat.chat.tools = R"([{"type": "function", "function": {"name": "get_weather"}}])";
  chat.chat.template_kwargs = R"({"enable_thinking": false})";
  chat.params.max_tokens = 6;
  chat.params.min_tokens = 6;
  const std::string prompt = tokenizer.apply_chat_template(chat.messages, chat.chat);
  EXPECT_NE(prompt.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}\n</tools>"),
            std::string::npos)
      << prompt;
  EXPECT_EQ(prompt.substr(prompt.size() - 19), "<think>\n\n</think>\n\n");
  Request ids = chat;
  ids.messages.clear();
  ids.prompt_ids = tokenizer.encode(prompt);
  EXPECT_EQ(engine.generate(chat).tokens, engine.generate(ids).tokens);

  // Gemma 2's template refuses a system message with raise_exception.
  testing::TempDir gemma_dir;
  testing::write_text_model(gemma_dir.path());
  std::ifstream gemma(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/google-gemma-2-2b-it.jinja");
  std::stringstream gemma_text;
  gemma_text << gemma.rdbuf();
  gemma_dir.write("chat_template.jinja", gemma_text.str());
  Engine gemma_engine(gemma_dir.path());
  Request bad;
  bad.messages = {{"system", "Be brief."}, {"user", "Hi"}};
  bad.params.max_tokens = 2;
  try {
    gemma_engine.generate(bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("chat template '" + gemma_dir.path() +
                                         "/chat_template.jinja' line 1: raise_exception: System role not supported"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(EngineText, BadTextRequestsAreRejectedNamingTheField) {
  Request both = text_request("hi");
  both.prompt_ids = {5, 6};
  EXPECT_NE(testing::error_message([&] { engine_->generate(both); }).find("one way"), std::string::npos);
  Request invalid_utf8 = text_request("bad \xC3 byte");
  const std::string message = testing::error_message([&] { engine_->generate(invalid_utf8); });
  EXPECT_NE(message.find("prompt"), std::string::npos) << message;
  EXPECT_EQ(testing::error_code_of([&] { engine_->generate(invalid_utf8); }), ErrorCode::InvalidArgument);
  Request empty_stop = text_request("hi");
  empty_stop.params.stop = {"x", ""};
  EXPECT_NE(testing::error_message([&] { engine_->generate(empty_stop); }).find("params.stop[1]"), std::string::npos);
}

TEST(EngineWithoutTokenizer, TextFeaturesNeedATokenizer) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  EXPECT_EQ(engine.tokenizer(), nullptr);
  Request text;
  text.prompt = "hello";
  EXPECT_NE(testing::error_message([&] { engine.generate(text); }).find("needs a tokenizer"), std::string::npos);
  Request stop;
  stop.prompt_ids = {1, 2, 3};
  stop.params.stop = {"x"};
  EXPECT_NE(testing::error_message([&] { engine.generate(stop); }).find("params.stop"), std::string::npos);
  Request ids;
  ids.prompt_ids = {1, 2, 3};
  ids.params.max_tokens = 3;
  EXPECT_EQ(engine.generate(ids).text, "");
}

}  // namespace
}  // namespace izwi
