// Speech-to-speech conversations over izwi-server's realtime WebSocket (server/realtime_conversation.h)
// with the tiny LFM2-Audio (a stand-in tokenizer and a random Mimi beside it), driven by the
// official openai client's realtime class (tests/serving/realtime_conversation.mjs): the server's
// VAD turns speech, silence, speech, silence into two turns and answers each with speech and its
// transcript, the second from the prefix cache; speech during an answer cancels it (barge-in) and
// truncates it; response.cancel stops one; bad and out-of-order events get error events naming
// the field while the session goes on. With websocketpp's client: a client that vanishes
// mid-answer leaves the engine idle.

#include <gtest/gtest.h>
#include <httplib.h>
#include <websocketpp/client.hpp>
#include <websocketpp/config/asio_no_tls_client.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

/// Mono samples as little-endian PCM16 bytes.
std::string pcm16(const std::vector<float>& samples) {
  std::string bytes;
  for (const float s : samples) {
    const auto q = static_cast<int16_t>(std::lround(std::clamp(s, -1.0f, 32767.0f / 32768.0f) * 32768.0f));
    bytes.push_back(static_cast<char>(q & 0xff));
    bytes.push_back(static_cast<char>((q >> 8) & 0xff));
  }
  return bytes;
}

/// A gauge of /metrics for model "s2s", or -1 when it is not there.
double gauge(int port, const std::string& name) {
  httplib::Client http("127.0.0.1", port);
  const httplib::Result metrics = http.Get("/metrics");
  if (!metrics) return -1;
  std::smatch match;
  const std::regex line(name + "\\{model_name=\"s2s\"\\} ([0-9.e+-]+)");
  return std::regex_search(metrics->body, match, line) ? std::stod(match[1]) : -1;
}

/// Polls the gauge until it equals `value`; false after 60 s.
bool wait_gauge(int port, const std::string& name, double value) {
  for (int i = 0; i < 6000; ++i) {
    if (gauge(port, name) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class ServerRealtimeConversation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_dir_ = new testing::TempDir;
    testing::write_lfm2_audio_with_tokenizer(model_dir_->path(), true);
  }
  static void TearDownTestSuite() {
    delete model_dir_;
    model_dir_ = nullptr;
  }
  static server::ServerOptions options() {
    server::ServerOptions options;
    options.models = {{"s2s", model_dir_->path()}};
    options.api_key = "sk-izwi-test";
    options.realtime_port = 0;
    return options;
  }
  static testing::TempDir* model_dir_;
};

testing::TempDir* ServerRealtimeConversation::model_dir_ = nullptr;

TEST_F(ServerRealtimeConversation, TheOpenaiRealtimeClientHoldsAConversation) {
  testing::RunningServer server(options());
  testing::TempDir work;
  // The fixture's audio is the "speech" (a tonal signal the VAD hears as voiced); a second of
  // zeros is the pause. The session takes it at the WAV's rate.
  const AudioBuffer wav = read_audio(std::string(IZWI_TEST_DATA_DIR) + "/lfm2-audio-tiny/audio.wav");
  const std::string speech = work.write("speech.pcm", pcm16(to_mono(wav)));
  const std::string silence = work.write("silence.pcm", pcm16(std::vector<float>(wav.sample_rate, 0.0f)));

  const nlohmann::json got = testing::run_node_client(
      "realtime_conversation.mjs", std::to_string(server.server().realtime_port()) + " sk-izwi-test s2s " + speech +
                                       " " + silence + " " + std::to_string(wav.sample_rate));

  EXPECT_EQ(got["created"]["type"], "realtime");
  EXPECT_EQ(got["created"]["model"], "s2s");
  EXPECT_EQ(got["created"]["audio"]["input"]["turn_detection"]["type"], "server_vad");
  EXPECT_EQ(got["updated"]["audio"]["input"]["format"]["rate"], wav.sample_rate);
  EXPECT_EQ(got["updated"]["audio"]["input"]["turn_detection"]["silence_duration_ms"], 400);
  EXPECT_EQ(got["updated"]["audio"]["output"]["format"]["rate"], 24000);

  // Bad input: named, and the session went on (everything below ran on it).
  EXPECT_EQ(got["bad_audio"]["param"], "audio");
  EXPECT_EQ(got["bad_audio"]["event_id"], "bad-audio");
  EXPECT_EQ(got["cancel_idle"]["code"], "response_cancel_not_active");
  EXPECT_NE(got["create_without_turn"]["message"].get<std::string>().find("no user turn"), std::string::npos);
  EXPECT_EQ(got["bad_item_audio"]["param"], "item.content[0].audio");
  EXPECT_EQ(got["bad_turn_detection"]["param"], "type");
  EXPECT_NE(got["bad_turn_detection"]["message"].get<std::string>().find("semantic_vad"), std::string::npos);
  EXPECT_EQ(got["commit_empty"]["code"], "input_audio_buffer_commit_empty");
  EXPECT_EQ(got["create_while_active"]["code"], "conversation_already_has_active_response");

  // Two turns found by the VAD, each answered in full: speech with its transcript.
  ASSERT_EQ(got["turns"].size(), 2u);
  const double speech_ms = 1000.0 * static_cast<double>(wav.samples.size()) / wav.sample_rate;
  for (size_t t = 0; t < 2; ++t) {
    const nlohmann::json& turn = got["turns"][t];
    const int64_t start = turn["started"]["audio_start_ms"], end = turn["stopped"]["audio_end_ms"];
    // The second turn's start is padded by 200 ms; the first began at the first sample.
    EXPECT_NEAR(static_cast<double>(end - start), speech_ms + (t == 0 ? 0 : 200), 30) << "turn " << t;
    EXPECT_EQ(turn["committed"]["item_id"], turn["started"]["item_id"]);
    const nlohmann::json& response = turn["response"];
    EXPECT_EQ(response["status"], "incomplete") << response.dump();  // max_output_tokens 16
    EXPECT_EQ(response["details"]["reason"], "max_output_tokens");
    EXPECT_GT(response["samples"].get<int>(), 0) << "the answer's speech";
    EXPECT_EQ(response["transcript"], response["done_transcript"]);
    EXPECT_EQ(response["usage"]["output_tokens"], 16) << response.dump();
  }
  EXPECT_EQ(got["turns"][0]["committed"]["previous_item_id"], nullptr);
  EXPECT_EQ(got["turns"][0]["response"]["usage"]["input_token_details"]["cached_tokens"], 0);
  // The second turn's history is the first turn and its answer: found in the prefix cache.
  EXPECT_GE(got["turns"][1]["response"]["usage"]["input_token_details"]["cached_tokens"].get<int>(), 32)
      << got["turns"][1]["response"].dump();

  // Barge-in: cancelled by the turn, truncated to the audio sent; response.cancel stops the next.
  EXPECT_EQ(got["barge_in"]["status"], "cancelled");
  EXPECT_EQ(got["barge_in"]["details"]["reason"], "turn_detected");
  EXPECT_LT(got["barge_in"]["usage"]["output_tokens"].get<int>(), 400);
  ASSERT_TRUE(got["truncated"].is_object());
  EXPECT_EQ(got["truncated"]["item_id"], got["barge_in"]["item_id"]);
  EXPECT_EQ(got["truncated"]["audio_end_ms"], got["barge_in"]["samples"].get<int64_t>() * 1000 / 24000);
  EXPECT_EQ(got["cancelled"]["status"], "cancelled");
  EXPECT_EQ(got["cancelled"]["details"]["reason"], "client_cancelled");

  // Without the VAD the client's own items and response.create drive it; text only when asked.
  EXPECT_TRUE(got["manual_session"]["audio"]["input"]["turn_detection"].is_null());
  EXPECT_EQ(got["text_item"]["content"][0]["type"], "input_text");
  EXPECT_EQ(got["manual"]["status"], "incomplete");  // max_output_tokens 8 reached
  EXPECT_EQ(got["manual"]["usage"]["output_tokens"], 8);
  EXPECT_EQ(got["manual_session"]["output_modalities"], nlohmann::json::array({"text"}));
  EXPECT_EQ(got["manual"]["samples"], 0) << "no audio when only text is asked for";
  EXPECT_EQ(got["manual"]["part_type"], "output_text");
  EXPECT_FALSE(got["manual"]["transcript"].get<std::string>().empty());
  EXPECT_EQ(got["manual"]["transcript"], got["manual"]["done_transcript"]);

  for (const char* type :
       {"session.created", "session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed", "conversation.item.created", "response.created", "response.output_item.added",
        "response.output_audio.delta", "response.output_audio_transcript.delta", "response.output_text.delta",
        "response.done", "error"}) {
    EXPECT_NE(std::find(got["event_types"].begin(), got["event_types"].end(), type), got["event_types"].end()) << type;
  }
  // Two conversations at once, asked the same: the same answer.
  ASSERT_EQ(got["concurrent"].size(), 2u);
  EXPECT_EQ(got["concurrent"][0]["usage"]["output_tokens"], 12);
  EXPECT_GT(got["concurrent"][0]["samples"].get<int>(), 0);
  EXPECT_EQ(got["concurrent"][0]["samples"], got["concurrent"][1]["samples"]);
  EXPECT_EQ(got["concurrent"][0]["transcript"], got["concurrent"][1]["transcript"]);
  EXPECT_EQ(got["concurrent"][0]["usage"]["output_token_details"],
            got["concurrent"][1]["usage"]["output_token_details"]);
  // Each response is a finished request in /metrics: the two cancels as aborts, the rest at the limit.
  httplib::Client http("127.0.0.1", server.port());
  const std::string metrics = http.Get("/metrics")->body;
  for (const auto& [reason, count] : {std::pair{"abort", 2}, std::pair{"length", 5}}) {
    std::smatch match;
    const std::regex line(std::string("vllm:request_success_total\\{model_name=\"s2s\",finished_reason=\"") + reason +
                          "\"\\} ([0-9]+)");
    ASSERT_TRUE(std::regex_search(metrics, match, line)) << reason << "\n" << metrics;
    EXPECT_EQ(std::stoi(match[1]), count) << reason;
  }
  // Every response ended: nothing is left running.
  EXPECT_TRUE(wait_gauge(server.port(), "vllm:num_requests_running", 0));
}

using WsClient = websocketpp::client<websocketpp::config::asio_client>;

TEST_F(ServerRealtimeConversation, AClientThatVanishesMidAnswerFreesEverything) {
  server::ServerOptions opts = options();
  opts.api_key.clear();
  testing::RunningServer server(opts);
  WsClient client;
  client.clear_access_channels(websocketpp::log::alevel::all);
  client.clear_error_channels(websocketpp::log::elevel::all);
  client.init_asio();
  std::promise<void> answering;
  std::atomic<bool> said{false};
  client.set_open_handler([&](websocketpp::connection_hdl hdl) {
    const nlohmann::json events[] = {
        {{"type", "session.update"}, {"session", {{"max_output_tokens", 1000}, {"turn_detection", nullptr}}}},
        {{"type", "conversation.item.create"},
         {"item", {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "hi"}}}}}}},
        {{"type", "response.create"}}};
    for (const auto& e : events) client.send(hdl, e.dump(), websocketpp::frame::opcode::text);
  });
  client.set_message_handler([&](websocketpp::connection_hdl, const WsClient::message_ptr& message) {
    if (nlohmann::json::parse(message->get_payload())["type"] == "response.output_audio.delta" &&
        !said.exchange(true)) {
      answering.set_value();
    }
  });
  std::error_code error;
  WsClient::connection_ptr connection = client.get_connection(
      "ws://127.0.0.1:" + std::to_string(server.server().realtime_port()) + "/v1/realtime?model=s2s", error);
  ASSERT_FALSE(error) << error.message();
  client.connect(connection);
  std::thread thread([&] { client.run(); });
  struct Joined {
    WsClient& client;
    std::thread& thread;
    ~Joined() {
      client.stop();
      thread.join();
    }
  } joined{client, thread};
  ASSERT_EQ(answering.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(gauge(server.port(), "vllm:num_requests_running"), 1);
  std::promise<void> gone;
  asio::post(client.get_io_service(), [&] {
    connection->get_raw_socket().close();  // no closing handshake, as a crashed client
    gone.set_value();
  });
  gone.get_future().wait();
  EXPECT_TRUE(wait_gauge(server.port(), "vllm:num_requests_running", 0)) << "the answer still runs";
  EXPECT_TRUE(wait_gauge(server.port(), "vllm:kv_cache_usage_perc", 0)) << "its KV blocks are still held";
}

}  // namespace
}  // namespace izwi
