// izwi-server's HTTP contract: OpenAI error objects with the right status for bad input (and the
// server keeps serving), authentication, admission (429, 503 while draining), a client that hangs
// up aborts its request, streamed speech and transcription, metrics under vLLM's names, and a
// load of 64 concurrent streams (Node's fetch) a quarter of which disconnect.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base64.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

/// One text model (and a TTS and an ASR model) served for a whole suite.
class ServerHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dirs_ = new Dirs;
    testing::write_text_model(dirs_->text.path());
    testing::write_qwen3_tts_with_tokenizer(dirs_->tts.path());
    testing::write_voxtral_with_tokenizer(dirs_->asr.path());
  }
  static void TearDownTestSuite() {
    delete dirs_;
    dirs_ = nullptr;
  }
  static server::ServerOptions options() {
    server::ServerOptions o;
    o.models = {{"text", dirs_->text.path()}, {"tts", dirs_->tts.path()}, {"asr", dirs_->asr.path()}};
    return o;
  }
  static json error_of(const httplib::Result& r) { return json::parse(r->body).at("error"); }
  static std::string chat_body(int max_tokens, bool stream) {
    return json{{"model", "text"},
                {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                {"max_tokens", max_tokens},
                {"temperature", 0},
                {"stream", stream}}
        .dump();
  }
  /// Waits until no request of the text model holds KV blocks or waits; "" or the metrics then.
  static std::string wait_idle(httplib::Client& client) {
    for (int i = 0; i < 500; ++i) {
      const std::string metrics = client.Get("/metrics")->body;
      if (metrics.find("vllm:num_requests_running{model_name=\"text\"} 0") != std::string::npos &&
          metrics.find("vllm:num_requests_waiting{model_name=\"text\"} 0") != std::string::npos &&
          metrics.find("vllm:kv_cache_usage_perc{model_name=\"text\"} 0\n") != std::string::npos) {
        return "";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return client.Get("/metrics")->body.substr(0, 800);
  }

  struct Dirs {
    testing::TempDir text, tts, asr;
  };
  static Dirs* dirs_;
};

ServerHttp::Dirs* ServerHttp::dirs_ = nullptr;

TEST_F(ServerHttp, BadRequestsGetOpenAiErrorsAndServingGoesOn) {
  testing::RunningServer server(options());
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const auto post = [&](const std::string& path, const std::string& body) {
    return client.Post(path.c_str(), body, "application/json");
  };
  struct Case {
    std::string path, body;
    int status;
    std::string param;
  };
  const std::string big_prompt(100, 'a');
  std::string long_stop;  // ~20,000 tokens: longer than the model's context
  for (int i = 0; i < 20000; ++i) long_stop += " x";
  const std::vector<Case> cases = {
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "user", "con)", 400, ""},
      {"/v1/chat/completions", R"([1, 2])", 400, ""},
      {"/v1/chat/completions", R"({"model": 7, "messages": []})", 400, "model"},
      {"/v1/chat/completions", R"({"model": "text", "messages": "hi"})", 400, "messages"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": 1}]})", 400, "messages[0].role"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "max_tokens": "9"})", 400, "max_tokens"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "max_tokens": 100000000000})", 400,
       "max_tokens"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5000})", 400, "max_tokens"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "temperature": -1})", 400, "temperature"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "n": 129})", 400,
       "n"},
      {"/v1/completions", R"({"model": "text", "prompt": "x", "n": 2, "best_of": 3})", 400, "best_of"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "max_tokens": 4, "min_tokens": 5})", 400,
       "min_tokens"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "ignore_eos": 1})",
       400, "ignore_eos"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "tools": 5})", 400,
       "tools"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": [1]})", 400,
       "chat_template_kwargs"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "assistant", "content": "", "tool_calls": 3}]})", 400,
       "messages[0].tool_calls"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "tool", "content": "", "tool_call_id": 3}]})",
       400, "messages[0].tool_call_id"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "tools": [1]})",
       400, "tools[0]"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "", "content": "x"}]})", 400,
       "messages[0].role"},
      {"/v1/chat/completions", R"({"model": "text", "messages": [{"role": "wizard", "content": "x"}]})", 400,
       "messages[0].role"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": {"messages": []}})",
       400, "chat_template_kwargs"},
      {"/v1/chat/completions",
       R"({"model": "text", "messages": [{"role": "user", "content": "x"}],)"
       R"( "chat_template_kwargs": {"add_generation_prompt": false}})",
       400, "chat_template_kwargs"},
      {"/v1/completions", json{{"model", "text"}, {"prompt", "a"}, {"stop", long_stop}}.dump(), 400, "stop"},
      {"/v1/chat/completions", R"({"model": "nope", "messages": [{"role": "user", "content": "x"}]})", 404, "model"},
      {"/v1/chat/completions", R"({"model": "tts", "messages": [{"role": "user", "content": "x"}]})", 400, "model"},
      {"/v1/completions", R"({"model": "text", "prompt": [1, 99999]})", 400, "prompt"},
      {"/v1/completions", R"({"model": "text", "prompt": ["a", "b"]})", 400, "prompt"},
      {"/v1/completions", R"({"model": "text", "prompt": "a", "stop": ["a", "b", "c", "d", "e"]})", 400, "stop"},
      {"/v1/audio/speech", R"({"model": "text", "input": "hi", "voice": "alice"})", 400, "model"},
      {"/v1/audio/speech", R"({"model": "tts", "input": "hi", "voice": "carol"})", 400, "voice"},
      {"/v1/audio/speech", R"({"model": "tts", "input": "", "voice": "alice"})", 400, "input"},
      {"/v1/audio/speech", R"({"model": "tts", "input": "hi", "voice": "alice", "response_format": "mp3"})", 400,
       "response_format"},
      {"/v1/audio/transcriptions", R"({"model": "asr"})", 400, "file"},
  };
  for (const Case& c : cases) {
    const httplib::Result r = post(c.path, c.body);
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, c.status) << c.body << " -> " << r->body;
    const json error = error_of(r);
    EXPECT_TRUE(error.at("message").is_string()) << c.body;
    EXPECT_EQ(error.at("param"), c.param.empty() ? json(nullptr) : json(c.param)) << c.body << " -> " << r->body;
  }
  // Multipart uploads: no file, and a file that is not audio.
  httplib::MultipartFormDataItems no_file = {{"model", "asr", "", ""}};
  httplib::Result r = client.Post("/v1/audio/transcriptions", no_file);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(error_of(r).at("param"), "file");
  httplib::MultipartFormDataItems not_audio = {{"model", "asr", "", ""},
                                               {"file", "this is not audio", "a.wav", "audio/wav"}};
  r = client.Post("/v1/audio/transcriptions", not_audio);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(error_of(r).at("param"), "file");
  // A 100 MB body is refused before it is read.
  r = post("/v1/chat/completions", std::string(100u << 20, ' '));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(error_of(r).at("code"), "request_too_large");
  r = client.Get("/v1/nothing-here");
  EXPECT_EQ(r->status, 404);
  // Still serving.
  r = post("/v1/chat/completions", chat_body(4, false));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["usage"]["completion_tokens"], 4);
}

TEST_F(ServerHttp, AWrongKindOfModelIsNamedWithTheRouteThatServesIt) {
  testing::RunningServer server(options());
  httplib::Client client(server.url());
  client.set_read_timeout(60, 0);
  const auto message_of = [&](const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return std::string();
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(error_of(r).at("param"), "model") << r->body;
    return error_of(r).at("message").get<std::string>();
  };
  const std::string chat_tts = R"({"model": "tts", "messages": [{"role": "user", "content": "x"}]})";
  EXPECT_EQ(message_of(client.Post("/v1/chat/completions", chat_tts, "application/json")),
            "/v1/chat/completions serves text models; 'tts' is a text-to-speech model: use /v1/audio/speech");
  EXPECT_EQ(message_of(client.Post("/v1/completions", R"({"model": "asr", "prompt": [1, 2]})", "application/json")),
            "/v1/completions serves text models; 'asr' is a speech recognition model: use "
            "/v1/audio/transcriptions or the realtime WebSocket (/v1/realtime)");
  EXPECT_EQ(message_of(client.Post("/v1/audio/speech", R"({"model": "text", "input": "hi"})", "application/json")),
            "/v1/audio/speech serves speech models; 'text' is a text model: use /v1/completions or "
            "/v1/chat/completions");
  const httplib::MultipartFormDataItems form = {{"model", "tts", "", ""}, {"file", "x", "a.wav", "audio/wav"}};
  EXPECT_EQ(message_of(client.Post("/v1/audio/transcriptions", form)),
            "/v1/audio/transcriptions serves transcription models; 'tts' is a text-to-speech model: use "
            "/v1/audio/speech");
}

TEST_F(ServerHttp, AnApiKeyGuardsTheV1Routes) {
  server::ServerOptions o = options();
  o.api_key = "sk-right";
  testing::RunningServer server(o);
  httplib::Client client(server.url());
  EXPECT_EQ(client.Get("/v1/models")->status, 401);
  EXPECT_EQ(error_of(client.Get("/v1/models")).at("code"), "invalid_api_key");
  EXPECT_EQ(client.Get("/v1/models", {{"Authorization", "Bearer sk-wrong"}})->status, 401);
  EXPECT_EQ(client.Get("/v1/models", {{"Authorization", "Bearer sk-right"}})->status, 200);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Get("/metrics")->status, 200);
}

TEST_F(ServerHttp, AClientThatHangsUpAbortsItsRequestAndFreesItsBlocks) {
  testing::RunningServer server(options());
  httplib::Client client(server.url());
  for (const bool stream : {true, false}) {
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = chat_body(400, stream);
    req.set_header("Content-Type", "application/json");
    std::atomic<int> chunks{0};
    if (stream) {
      req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };
      httplib::Response res;
      httplib::Error error = httplib::Error::Success;
      client.send(req, res, error);  // the receiver gives up after 3 chunks: the connection closes
    } else {
      // A client that times out long before 400 tokens are made.
      httplib::Client impatient(server.url());
      impatient.set_read_timeout(0, 30000);
      impatient.Post(req.path.c_str(), req.body, "application/json");
    }
    EXPECT_EQ(wait_idle(client), "") << (stream ? "stream" : "whole");
    const std::string metrics = client.Get("/metrics")->body;
    EXPECT_NE(metrics.find("finished_reason=\"abort\""), std::string::npos) << metrics.substr(0, 400);
  }
}

TEST_F(ServerHttp, OverMaxConcurrentIs429AndDrainingIs503) {
  server::ServerOptions o = options();
  o.max_concurrent = 1;
  o.shutdown_grace_ms = 60000;
  auto server = std::make_unique<testing::RunningServer>(o);
  httplib::Client client(server->url());
  std::promise<void> started;
  std::atomic<bool> signalled{false};
  std::string streamed;
  std::thread streamer([&] {
    httplib::Client c(server->url());
    c.set_read_timeout(120, 0);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = chat_body(300, true);
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      streamed.append(data, n);
      if (!signalled.exchange(true)) started.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a slow reader keeps the slot
      return true;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    c.send(req, res, error);
  });
  started.get_future().wait();
  httplib::Result r = client.Post("/v1/chat/completions", chat_body(2, false), "application/json");
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(error_of(r).at("code"), "rate_limit_exceeded");
  std::thread stopper([&] { server->server().shutdown(); });
  for (int i = 0; i < 200; ++i) {
    r = client.Post("/v1/chat/completions", chat_body(2, false), "application/json");
    if (r && r->status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  streamer.join();  // the running stream finished within the grace period
  stopper.join();
  EXPECT_NE(streamed.find("\"finish_reason\":\"length\""), std::string::npos);
  EXPECT_NE(streamed.find("data: [DONE]"), std::string::npos);
  server.reset();
}

TEST_F(ServerHttp, StreamedSpeechAndTranscriptionAddUpToTheWhole) {
  testing::RunningServer server(options());
  httplib::Client client(server.url());
  client.set_read_timeout(120, 0);
  json speech = {{"model", "tts"}, {"input", "hi"}, {"voice", "alice"}, {"temperature", 0}, {"max_frames", 8}};
  speech["response_format"] = "pcm";
  const std::string whole = client.Post("/v1/audio/speech", speech.dump(), "application/json")->body;
  ASSERT_FALSE(whole.empty());
  speech["stream_format"] = "audio";
  EXPECT_EQ(client.Post("/v1/audio/speech", speech.dump(), "application/json")->body, whole);
  speech["response_format"] = "wav";
  const std::string wav = client.Post("/v1/audio/speech", speech.dump(), "application/json")->body;
  ASSERT_EQ(wav.size(), 44 + whole.size());
  EXPECT_EQ(wav.substr(44), whole);
  speech["stream_format"] = "sse";
  speech["response_format"] = "pcm";
  const std::string events = client.Post("/v1/audio/speech", speech.dump(), "application/json")->body;
  std::string joined;
  size_t pos = 0;
  bool done = false;
  while ((pos = events.find("data: ", pos)) != std::string::npos) {
    const size_t end = events.find("\n\n", pos);
    const json event = json::parse(events.substr(pos + 6, end - pos - 6));
    if (event["type"] == "speech.audio.delta") joined += *base64_decode(event["audio"].get<std::string>());
    done = done || event["type"] == "speech.audio.done";
    pos = end;
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(joined, whole);
  // A whole WAV file decodes to the same samples.
  speech.erase("stream_format");
  speech["response_format"] = "wav";
  const std::string file = client.Post("/v1/audio/speech", speech.dump(), "application/json")->body;
  const AudioBuffer decoded = read_audio_from_memory(file.data(), file.size(), "speech.wav");
  EXPECT_EQ(decoded.samples.size() * 2, whole.size());

  std::ifstream in(std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav", std::ios::binary);
  const std::string audio((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto transcribe = [&](const std::string& format, const std::string& stream) {
    httplib::MultipartFormDataItems form = {{"model", "asr", "", ""},
                                            {"response_format", format, "", ""},
                                            {"stream", stream, "", ""},
                                            {"file", audio, "audio.wav", "audio/wav"}};
    return client.Post("/v1/audio/transcriptions", form)->body;
  };
  const std::string text = json::parse(transcribe("json", "false"))["text"];
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(transcribe("text", "false"), text);
  const json verbose = json::parse(transcribe("verbose_json", "false"));
  EXPECT_EQ(verbose["text"], text);
  const AudioBuffer wav_in = read_audio_from_memory(audio.data(), audio.size(), "audio.wav");
  EXPECT_NEAR(verbose["duration"].get<double>(),
              static_cast<double>(wav_in.samples.size()) / wav_in.channels / wav_in.sample_rate, 1e-6);
  const std::string deltas = transcribe("json", "true");
  std::string streamed_text, done_text;
  pos = 0;
  while ((pos = deltas.find("data: ", pos)) != std::string::npos) {
    const size_t end = deltas.find("\n\n", pos);
    const json event = json::parse(deltas.substr(pos + 6, end - pos - 6));
    if (event["type"] == "transcript.text.delta") streamed_text += event["delta"].get<std::string>();
    if (event["type"] == "transcript.text.done") done_text = event["text"];
    pos = end;
  }
  EXPECT_EQ(streamed_text, text);
  EXPECT_EQ(done_text, text);
  const std::string metrics = client.Get("/metrics")->body;
  EXPECT_NE(metrics.find("izwi_audio_real_time_factor_count{model_name=\"tts\"}"), std::string::npos);
}

TEST_F(ServerHttp, ManyStreamsSomeHangingUpLeaveNothingBehind) {
  server::ServerOptions o = options();
  testing::RunningServer server(o);
  httplib::Client client(server.url());
  const auto rss_kb = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0L;
  };
  std::vector<long> rss;
  for (int round = 0; round < 3; ++round) {
    int status = 0;
    const std::string printed = testing::run_command(
        std::string(IZWI_NODE) + " " + IZWI_SERVING_DIR + "/load_client.mjs " + server.url() + " text 64 24 256 2>&1",
        &status);
    ASSERT_EQ(status, 0) << printed;
    const json got = json::parse(printed);
    EXPECT_EQ(got["completed"], 48) << "round " << round << ": " << printed;
    EXPECT_EQ(got["hung_up"], 16) << "round " << round;
    EXPECT_EQ(wait_idle(client), "") << "round " << round;
    rss.push_back(rss_kb());
  }
  // After the first round has warmed the allocators, memory stays flat.
  EXPECT_LT(rss[2] - rss[1], 16 * 1024) << rss[1] << " kB -> " << rss[2] << " kB";
}

}  // namespace
}  // namespace izwi
