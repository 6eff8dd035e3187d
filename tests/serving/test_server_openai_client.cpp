// izwi-server driven by the official OpenAI client (npm `openai`, tests/serving/openai_client.mjs):
// chat (whole and streamed), completions, transcription and speech answer what the C++ API gives
// for the same greedy requests, and so do chat logprobs (whole and streamed) and completions'
// echo scoring; an unknown model is OpenAI's 404, logprobs 21 a 400 naming it.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "server/audio_encoding.h"
#include "serving/running_server.h"
#include "serving/whole_transcript.h"

namespace izwi {
namespace {

TEST(ServerOpenAiClient, AnswersAsTheCppApiDoes) {
  testing::TempDir text_dir, asr_dir, tts_dir;
  testing::write_text_model(text_dir.path());
  testing::write_voxtral_with_tokenizer(asr_dir.path());
  testing::write_qwen3_tts_with_tokenizer(tts_dir.path());
  const std::string audio_file = std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav";
  server::ServerOptions options;
  options.models = {{"text", text_dir.path()}, {"asr", asr_dir.path()}, {"tts", tts_dir.path()}};
  options.api_key = "sk-izwi-test";
  testing::RunningServer server(options);

  const nlohmann::json got =
      testing::run_node_client("openai_client.mjs", server.url() + "/v1 sk-izwi-test text asr tts " + audio_file);

  Engine text(text_dir.path());
  Request chat;
  chat.messages = {{"user", "hello there"}};
  chat.params.max_tokens = 8;
  const Output chat_out = text.generate(chat);
  const int32_t chat_prompt = static_cast<int32_t>(text.tokenizer()->encode_chat(chat.messages).size());
  for (const char* kind : {"chat", "chat_stream"}) {
    EXPECT_EQ(got[kind]["text"], chat_out.text) << kind;
    EXPECT_EQ(got[kind]["finish_reason"], chat_out.finish_reason == FinishReason::Length ? "length" : "stop") << kind;
    EXPECT_EQ(got[kind]["usage"]["prompt_tokens"], chat_prompt) << kind;
    EXPECT_EQ(got[kind]["usage"]["completion_tokens"], chat_out.tokens.size()) << kind;
  }
  Request completion;
  completion.prompt = "hello";
  completion.params.max_tokens = 6;
  const Output completion_out = text.generate(completion);
  EXPECT_EQ(got["completion"]["text"], completion_out.text);
  EXPECT_EQ(got["completion"]["usage"]["completion_tokens"], completion_out.tokens.size());

  // Logprobs equal the engine's within 1e-4; each top list is sorted and sums to <= 1.
  Request chat_lp = chat;
  chat_lp.params.sampling.temperature = 0.0f;
  chat_lp.params.logprobs = 3;
  const Output chat_lp_out = text.generate(chat_lp);
  const nlohmann::json& lp_content = got["chat_logprobs"]["content"];
  ASSERT_EQ(lp_content.size(), chat_lp_out.logprobs.size());
  for (size_t k = 0; k < lp_content.size(); ++k) {
    EXPECT_EQ(lp_content[k]["token"], text.tokenizer()->decode({chat_lp_out.tokens[k]}));
    EXPECT_NEAR(lp_content[k]["logprob"].get<double>(), chat_lp_out.logprobs[k].logprob, 1e-4);
    const nlohmann::json& top = lp_content[k]["top_logprobs"];
    ASSERT_EQ(top.size(), 3u);
    double mass = 0;
    for (size_t j = 0; j < top.size(); ++j) {
      if (j > 0) EXPECT_GE(top[j - 1]["logprob"].get<double>(), top[j]["logprob"].get<double>());
      EXPECT_NEAR(top[j]["logprob"].get<double>(), chat_lp_out.logprobs[k].top[j].second, 1e-4);
      mass += std::exp(top[j]["logprob"].get<double>());
    }
    EXPECT_LE(mass, 1.0 + 1e-6);
  }
  EXPECT_EQ(got["chat_logprobs_stream"]["content"], lp_content);
  Request echo;
  echo.prompt = "hello";
  echo.params.max_tokens = 0;
  echo.params.prompt_logprobs = 2;
  const Output echo_out = text.generate(echo);
  const nlohmann::json& echoed = got["completion_echo"];
  EXPECT_EQ(echoed["text"], "hello");
  EXPECT_EQ(echoed["finish_reason"], "length");
  ASSERT_EQ(echoed["logprobs"]["token_logprobs"].size(), echo_out.prompt_logprobs.size() + 1);
  EXPECT_TRUE(echoed["logprobs"]["token_logprobs"][0].is_null());
  for (size_t i = 0; i < echo_out.prompt_logprobs.size(); ++i) {
    EXPECT_NEAR(echoed["logprobs"]["token_logprobs"][i + 1].get<double>(), echo_out.prompt_logprobs[i].logprob, 1e-4);
  }
  EXPECT_EQ(got["logprobs_21"]["status"], 400);
  EXPECT_EQ(got["logprobs_21"]["param"], "logprobs");

  const AudioBuffer audio = read_audio(audio_file);
  const Output transcript = testing::whole_transcript(asr_dir.path(), to_mono(audio), audio.sample_rate);
  EXPECT_FALSE(transcript.tokens.empty());
  EXPECT_EQ(got["transcription"]["text"], transcript.text);

  Engine tts(tts_dir.path());
  SpeechRequest speech;
  speech.text = "hi";
  speech.speaker = "alice";
  speech.params.sampling.temperature = 0.0f;
  speech.params.codebook_sampling.temperature = 0.0f;
  speech.params.max_frames = 6;
  const Output spoken = tts.synthesize(speech);
  ASSERT_FALSE(spoken.audio.empty());
  EXPECT_EQ(base64_decode(got["speech_pcm_base64"].get<std::string>()),
            server::pcm16(spoken.audio.data(), spoken.audio.size()));

  EXPECT_EQ(got["unknown_model"]["status"], 404);
  EXPECT_EQ(got["unknown_model"]["code"], "model_not_found");
  EXPECT_EQ(got["unknown_model"]["param"], "model");
}

}  // namespace
}  // namespace izwi
