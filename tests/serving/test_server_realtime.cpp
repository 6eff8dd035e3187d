// Live transcription over izwi-server's WebSocket (OpenAI's realtime transcription events), driven
// by the `ws` npm client (tests/serving/realtime_client.mjs): audio appended in 100 ms pieces is
// transcribed as the C++ API transcribes the same samples, the deltas add up to the transcript,
// and bad events, a missing key and a wrong path get OpenAI's errors without ending the session;
// the key is also taken as a browser sends it (the openai-insecure-api-key.KEY subprotocol).
// With websocketpp's client: a client that vanishes mid-item frees its request, and shutdown
// closes the sessions still open ("going away") without hanging.

#include <gtest/gtest.h>
#include <httplib.h>
#include <websocketpp/client.hpp>
#include <websocketpp/config/asio_no_tls_client.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base64.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "serving/running_server.h"
#include "serving/whole_transcript.h"

namespace izwi {
namespace {

TEST(ServerRealtime, LiveTranscriptionAnswersAsTheCppApiDoes) {
  testing::TempDir asr_dir, work;
  testing::write_voxtral_with_tokenizer(asr_dir.path());
  server::ServerOptions options;
  options.models = {{"asr", asr_dir.path()}};
  options.api_key = "sk-izwi-test";
  options.realtime_port = 0;
  testing::RunningServer server(options);
  ASSERT_GT(server.server().realtime_port(), 0);

  // The fixture's audio as the client sends it: 16-bit PCM at its own rate.
  const AudioBuffer audio = read_audio(std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav");
  std::vector<float> samples = to_mono(audio);
  std::string pcm;
  for (float& s : samples) {
    const auto q = static_cast<int16_t>(std::lround(std::clamp(s, -1.0f, 32767.0f / 32768.0f) * 32768.0f));
    s = static_cast<float>(q) / 32768.0f;
    pcm.push_back(static_cast<char>(q & 0xff));
    pcm.push_back(static_cast<char>((q >> 8) & 0xff));
  }
  const std::string pcm_file = work.write("audio.pcm", pcm);

  int status = 0;
  const std::string printed = testing::run_command(
      std::string(IZWI_NODE) + " " + IZWI_SERVING_DIR +
          "/realtime_client.mjs ws://127.0.0.1:" + std::to_string(server.server().realtime_port()) +
          " sk-izwi-test asr " + pcm_file + " " + std::to_string(audio.sample_rate) + " 2>&1",
      &status);
  ASSERT_EQ(status, 0) << printed << "\n(the client needs `npm ci --prefix tests/serving`)";
  const nlohmann::json got = nlohmann::json::parse(printed);

  const Output expected = testing::whole_transcript(asr_dir.path(), samples, audio.sample_rate);
  ASSERT_FALSE(expected.text.empty());
  EXPECT_EQ(got["completed"]["transcript"], expected.text);
  EXPECT_GT(got["deltas"].size(), 1u) << "the text comes as the audio is decoded, not at once";
  std::string joined;
  for (const auto& delta : got["deltas"]) joined += delta.get<std::string>();
  EXPECT_EQ(joined, expected.text);
  EXPECT_EQ(got["completed"]["item_id"], got["committed"]["item_id"]);
  EXPECT_TRUE(got["committed"]["previous_item_id"].is_null());

  // One transcription model served: the session starts with it; the update's rate is taken.
  EXPECT_EQ(got["created"]["input_audio_transcription"]["model"], "asr");
  EXPECT_EQ(got["updated"]["input_audio_rate"], audio.sample_rate);
  EXPECT_EQ(got["commit_empty"]["code"], "input_audio_buffer_commit_empty");
  EXPECT_EQ(got["commit_empty"]["event_id"], "commit-empty");
  EXPECT_EQ(got["bad_audio"]["param"], "audio");
  EXPECT_EQ(got["unknown_type"]["param"], "type");
  EXPECT_NE(got["unknown_type"]["message"].get<std::string>().find("response.create"), std::string::npos);
  EXPECT_EQ(got["after_clear"]["code"], "input_audio_buffer_commit_empty");
  int completions = 0;
  for (const auto& type : got["event_types"]) {
    completions += type == "conversation.item.input_audio_transcription.completed" ? 1 : 0;
  }
  EXPECT_EQ(completions, 1) << "the cleared item must not complete";
  EXPECT_EQ(got["close_code"], 1000);

  EXPECT_EQ(got["without_key"]["status"], 401);
  EXPECT_EQ(got["without_key"]["body"]["error"]["code"], "invalid_api_key");
  EXPECT_EQ(got["wrong_path"]["status"], 404);
  EXPECT_EQ(got["wrong_key_protocol"]["status"], 401);
  EXPECT_EQ(got["key_protocol"]["protocol"], "realtime");
  EXPECT_EQ(got["key_protocol"]["created"], "transcription_session.created");
}

using WsClient = websocketpp::client<websocketpp::config::asio_client>;

/// A WebSocket client on its own thread that appends one second of silence once connected and
/// records how the server closed the connection.
class LiveClient {
 public:
  explicit LiveClient(int port) {
    client_.clear_access_channels(websocketpp::log::alevel::all);
    client_.clear_error_channels(websocketpp::log::elevel::all);
    client_.init_asio();
    client_.set_open_handler([this](websocketpp::connection_hdl hdl) {
      const std::string silence(2 * 24000, '\0');  // PCM16 at the default 24 kHz
      const nlohmann::json append = {{"type", "input_audio_buffer.append"}, {"audio", base64_encode(silence)}};
      client_.send(hdl, append.dump(), websocketpp::frame::opcode::text);
    });
    client_.set_close_handler([this](websocketpp::connection_hdl hdl) {
      close_code_ = client_.get_con_from_hdl(hdl)->get_remote_close_code();
    });
    std::error_code error;
    connection_ = client_.get_connection("ws://127.0.0.1:" + std::to_string(port) + "/v1/realtime", error);
    EXPECT_FALSE(error) << error.message();
    client_.connect(connection_);
    thread_ = std::thread([this] { client_.run(); });
  }
  ~LiveClient() {
    client_.stop();
    thread_.join();
  }
  /// Drops the TCP connection without a closing handshake, as a crashed client would.
  void vanish() {
    std::promise<void> done;
    asio::post(client_.get_io_service(), [&] {
      connection_->get_raw_socket().close();
      done.set_value();
    });
    done.get_future().wait();
  }
  int close_code() const { return close_code_; }

 private:
  WsClient client_;
  WsClient::connection_ptr connection_;
  std::thread thread_;
  std::atomic<int> close_code_{0};
};

/// Polls /metrics until the asr model has `running` requests; false after 30 s.
bool wait_running(int port, int running) {
  httplib::Client http("127.0.0.1", port);
  const std::string want = "vllm:num_requests_running{model_name=\"asr\"} " + std::to_string(running) + "\n";
  for (int i = 0; i < 3000; ++i) {
    const httplib::Result metrics = http.Get("/metrics");
    if (metrics && metrics->body.find(want) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ServerRealtime, AVanishedClientFreesItsRequestAndShutdownClosesTheRest) {
  testing::TempDir asr_dir;
  testing::write_voxtral_with_tokenizer(asr_dir.path());
  server::ServerOptions options;
  options.models = {{"asr", asr_dir.path()}};
  options.realtime_port = 0;
  options.shutdown_grace_ms = 300;
  auto server = std::make_unique<testing::RunningServer>(options);
  const int port = server->port();

  {
    LiveClient vanishing(server->server().realtime_port());
    ASSERT_TRUE(wait_running(port, 1)) << "the appended audio did not start a transcription";
    vanishing.vanish();
    EXPECT_TRUE(wait_running(port, 0)) << "the vanished client's transcription still runs";
  }

  LiveClient staying(server->server().realtime_port());
  ASSERT_TRUE(wait_running(port, 1));
  const auto start = std::chrono::steady_clock::now();
  server.reset();  // graceful shutdown: the item never commits, so it is aborted after the grace
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (int i = 0; i < 500 && staying.close_code() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(staying.close_code(), websocketpp::close::status::going_away);
}

}  // namespace
}  // namespace izwi
