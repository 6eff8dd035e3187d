// The playground page at GET / in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (tests/serving/playground_browser.mjs) against an in-process server with an API
// key. The page's streamed chat answer and its transcript of an uploaded file equal what the C++
// API gives for the same greedy requests; its speech loads into the <audio> element; the
// microphone, live over the realtime WebSocket (the key as a subprotocol), completes its item; a
// PNG screenshot is saved under the build tree. The Talk tab (tests/serving/playground_talk.mjs):
// the fake microphone's speech becomes a turn of a realtime conversation with the tiny LFM2-Audio
// (random Mimi), whose spoken answer the page schedules for playing beside its transcript. The
// Voices panel (tests/serving/playground_voices.mjs): a reference recorded from the fake microphone
// becomes a voice of a Qwen3-TTS Base model kept in a temporary --voices-dir, listed, spoken in
// from the Speech panel and deleted, as an uploaded file does; the server's 400 for a model that
// clones no voices is shown.

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/float_wav.h"
#include "common/qwen3_tts_base_model.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "server/playground.h"
#include "serving/running_server.h"
#include "serving/whole_transcript.h"

namespace izwi {
namespace {

std::string chromium_path() {
  const char* from_env = std::getenv("IZWI_CHROMIUM");
  return from_env != nullptr && *from_env != '\0' ? from_env : "/usr/bin/chromium";
}

TEST(ServerPlayground, PageServedWithoutKeyAndModelsCarryTheirKind) {
  testing::TempDir text_dir, asr_dir;
  testing::write_text_model(text_dir.path());
  testing::write_voxtral_with_tokenizer(asr_dir.path());
  server::ServerOptions options;
  options.models = {{"text", text_dir.path()}, {"asr", asr_dir.path()}};
  options.api_key = "sk-izwi-test";
  options.realtime_port = 0;
  testing::RunningServer server(options);
  httplib::Client client("127.0.0.1", server.port());

  const httplib::Result page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page->body, server::playground_html());
  EXPECT_NE(page->body.find("<title>izwi playground</title>"), std::string::npos);

  const httplib::Result config = client.Get("/playground/config");
  ASSERT_TRUE(config);
  EXPECT_EQ(nlohmann::json::parse(config->body),
            (nlohmann::json{{"realtime_port", server.server().realtime_port()}, {"api_key_required", true}}));

  EXPECT_EQ(client.Get("/v1/models")->status, 401);  // the page's API calls still need the key
  const httplib::Result models = client.Get("/v1/models", {{"Authorization", "Bearer sk-izwi-test"}});
  ASSERT_TRUE(models);
  const nlohmann::json data = nlohmann::json::parse(models->body)["data"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0]["kind"], "text");
  EXPECT_EQ(data[1]["kind"], "transcription");
  for (const nlohmann::json& model : data) EXPECT_GT(model["weight_bytes"].get<int64_t>(), 0);  // ModelInfo's
}

TEST(ServerPlayground, BrowserChatsSpeaksAndTranscribes) {
  const std::string chromium = chromium_path();
  ASSERT_TRUE(std::filesystem::exists(chromium))
      << "no Chromium at " << chromium
      << ": the playground test needs Debian's `chromium` (cmake/install_deps.sh installs it) or IZWI_CHROMIUM";
  testing::TempDir text_dir, tts_dir, asr_dir;
  testing::write_text_model(text_dir.path());
  testing::write_qwen3_tts_with_tokenizer(tts_dir.path());
  testing::write_voxtral_with_tokenizer(asr_dir.path());
  const std::string audio_file = std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav";
  const std::string screenshot = std::string(IZWI_BINARY_DIR) + "/tests/playground.png";
  std::filesystem::create_directories(std::filesystem::path(screenshot).parent_path());
  std::filesystem::remove(screenshot);
  server::ServerOptions options;
  options.models = {{"text", text_dir.path()}, {"tts", tts_dir.path()}, {"asr", asr_dir.path()}};
  options.api_key = "sk-izwi-test";
  options.realtime_port = 0;
  testing::RunningServer server(options);

  int status = 0;
  const std::string printed = testing::run_command("IZWI_CHROMIUM=" + chromium + " " + IZWI_NODE + " " +
                                                       IZWI_SERVING_DIR + "/playground_browser.mjs " + server.url() +
                                                       " sk-izwi-test text tts asr " + audio_file + " " + screenshot,
                                                   &status);
  ASSERT_EQ(status, 0) << printed
                       << "\n(the script needs `npm ci --prefix tests/serving`; cmake/install_deps.sh runs it)";
  const nlohmann::json got = nlohmann::json::parse(printed);
  EXPECT_EQ(got["title"], "izwi playground");
  EXPECT_EQ(got["page_errors"], nlohmann::json::array());

  Engine text(text_dir.path());
  Request chat;
  chat.messages = {{"user", "hello there"}};
  chat.params.max_tokens = 8;
  const Output chat_out = text.generate(chat);
  ASSERT_FALSE(chat_out.text.empty());
  EXPECT_EQ(got["chat"]["text"], chat_out.text);
  EXPECT_EQ(got["chat"]["finish_reason"], chat_out.finish_reason == FinishReason::Length ? "length" : "stop");

  EXPECT_EQ(got["speech_status"], "Done");
  EXPECT_GT(got["speech"]["duration"].get<double>(), 0.0);

  const AudioBuffer audio = read_audio(audio_file);
  const Output transcript = testing::whole_transcript(asr_dir.path(), to_mono(audio), audio.sample_rate);
  ASSERT_FALSE(transcript.text.empty());
  EXPECT_EQ(got["transcription"], transcript.text);
  EXPECT_EQ(got["transcription_status"], "Done");
  EXPECT_EQ(got["live"]["status"], "Done") << got["live"].dump();

  std::ifstream png(screenshot, std::ios::binary);
  ASSERT_TRUE(png) << "no screenshot at " << screenshot;
  const std::string bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 10000u);
  std::cout << "playground screenshot: " << screenshot << "\n";
}

TEST(ServerPlayground, BrowserTalksWithASpeechToSpeechModel) {
  const std::string chromium = chromium_path();
  ASSERT_TRUE(std::filesystem::exists(chromium)) << "no Chromium at " << chromium;
  testing::TempDir s2s_dir;
  testing::write_lfm2_audio_with_tokenizer(s2s_dir.path(), true);
  // The fake microphone: the tonal fixture WAV stands for speech, then 3 s of silence end the turn.
  const AudioBuffer speech = read_audio(std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav");
  std::vector<float> samples = to_mono(speech);
  samples.resize(samples.size() + 3 * static_cast<size_t>(speech.sample_rate), 0.0f);
  const std::string audio_file =
      s2s_dir.write("microphone.wav", testing::float_wav_bytes(samples, static_cast<uint32_t>(speech.sample_rate)));
  const std::string screenshot = std::string(IZWI_BINARY_DIR) + "/tests/playground_talk.png";
  std::filesystem::create_directories(std::filesystem::path(screenshot).parent_path());
  server::ServerOptions options;
  options.models = {{"s2s", s2s_dir.path()}};
  options.api_key = "sk-izwi-test";
  options.realtime_port = 0;
  testing::RunningServer server(options);

  int status = 0;
  const std::string printed = testing::run_command("IZWI_CHROMIUM=" + chromium + " " + IZWI_NODE + " " +
                                                       IZWI_SERVING_DIR + "/playground_talk.mjs " + server.url() +
                                                       " sk-izwi-test s2s " + audio_file + " " + screenshot,
                                                   &status);
  ASSERT_EQ(status, 0) << printed;
  const nlohmann::json got = nlohmann::json::parse(printed);
  EXPECT_EQ(got["page_errors"], nlohmann::json::array());
  ASSERT_GE(got["turns"].size(), 1u) << got.dump();
  EXPECT_EQ(got["turns"][0]["committed"], "true") << got.dump();
  EXPECT_EQ(got["status"], "Answering…");
  EXPECT_GT(got["answer"]["samples"].get<int>(), 0) << "the answer's speech was scheduled for playing";
  EXPECT_FALSE(got["answer"]["transcript"].get<std::string>().empty());
  EXPECT_EQ(got["stopped_status"], "Stopped");
  EXPECT_TRUE(std::filesystem::exists(screenshot));
}

TEST(ServerPlayground, BrowserRecordsAVoiceSpeaksInItAndDeletesIt) {
  const std::string chromium = chromium_path();
  ASSERT_TRUE(std::filesystem::exists(chromium)) << "no Chromium at " << chromium;
  testing::TempDir base_dir, tts_dir, voices_dir;
  testing::write_qwen3_tts_with_tokenizer(tts_dir.path());
  testing::make_qwen3_tts_base_model(base_dir);
  std::filesystem::copy_file(tts_dir.file("tokenizer.json"), base_dir.file("tokenizer.json"));
  const std::string audio_file = std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav";
  const std::string screenshot = std::string(IZWI_BINARY_DIR) + "/tests/playground_voices.png";
  std::filesystem::create_directories(std::filesystem::path(screenshot).parent_path());
  std::filesystem::remove(screenshot);
  server::ServerOptions options;
  options.models = {{"base", base_dir.path()}, {"tts", tts_dir.path()}};
  options.api_key = "sk-izwi-test";
  options.voices_dir = voices_dir.path();
  testing::RunningServer server(options);

  int status = 0;
  const std::string printed = testing::run_command("IZWI_CHROMIUM=" + chromium + " " + IZWI_NODE + " " +
                                                       IZWI_SERVING_DIR + "/playground_voices.mjs " + server.url() +
                                                       " sk-izwi-test base tts " + audio_file + " " + screenshot,
                                                   &status);
  ASSERT_EQ(status, 0) << printed;
  const nlohmann::json got = nlohmann::json::parse(printed);
  EXPECT_EQ(got["page_errors"], nlohmann::json::array());
  EXPECT_EQ(got["initial_list"], "No voices yet");
  EXPECT_FALSE(got["recorded"]["error"].get<bool>()) << got["recorded"];
  EXPECT_GT(got["recorded_seconds"].get<double>(), 1.0);  // 1.5 s of the fixture's 2.4 s
  EXPECT_LT(got["recorded_seconds"].get<double>(), 3.0);
  // The server's message, as it answered it.
  EXPECT_TRUE(got["wrong_model"]["error"].get<bool>()) << got["wrong_model"];
  EXPECT_EQ(got["wrong_model"]["text"].get<std::string>().rfind("'tts' is not a voice-cloning model", 0), 0u)
      << got["wrong_model"];

  ASSERT_FALSE(got["created"]["error"].get<bool>()) << got["created"];
  ASSERT_EQ(got["listed"].size(), 1u) << got.dump();
  const std::string id = got["listed"][0]["id"];
  EXPECT_EQ(id.rfind("voice_", 0), 0u) << id;
  EXPECT_EQ(got["listed"][0]["text"], "narrator " + id + " · base");
  EXPECT_EQ(got["speech_model"], "base");
  EXPECT_EQ(got["speech_voice"], id);

  EXPECT_EQ(got["speech"]["request"]["model"], "base");
  EXPECT_EQ(got["speech"]["request"]["voice"], id);
  EXPECT_EQ(got["speech"]["status"], 200);
  EXPECT_EQ(got["speech"]["content_type"], "audio/wav");
  EXPECT_EQ(got["speech"]["riff"], "RIFF");
  EXPECT_GT(got["speech"]["bytes"].get<int>(), 44) << "a WAV with samples";
  EXPECT_EQ(got["speech_status"], "Done");

  EXPECT_FALSE(got["deleted"]["error"].get<bool>()) << got["deleted"];
  EXPECT_EQ(got["deleted"]["text"], "Deleted narrator");
  EXPECT_EQ(got["listed_after"], nlohmann::json::array());
  EXPECT_EQ(got["list_after"], "No voices yet");
  for (const auto& voice : got["speech_voices_after"]) EXPECT_NE(voice, id);
  // The same from an uploaded file.
  EXPECT_EQ(got["chosen"]["text"], "Reference: audio.wav; name it and create the voice");
  EXPECT_EQ(got["uploaded"]["text"].get<std::string>().rfind("Created uploaded (voice_", 0), 0u) << got["uploaded"];
  ASSERT_EQ(got["uploaded_listed"].size(), 1u) << got.dump();
  EXPECT_NE(got["uploaded_listed"][0]["id"], id);
  EXPECT_EQ(got["uploaded_deleted"]["text"], "Deleted uploaded");
  // Gone from the server and its directory too.
  httplib::Client client(server.url());
  const httplib::Result list = client.Get("/v1/audio/voices", {{"Authorization", "Bearer sk-izwi-test"}});
  ASSERT_TRUE(list);
  EXPECT_EQ(nlohmann::json::parse(list->body)["data"], nlohmann::json::array());
  EXPECT_TRUE(std::filesystem::is_empty(voices_dir.path()));
  EXPECT_TRUE(std::filesystem::exists(screenshot));
}

}  // namespace
}  // namespace izwi
