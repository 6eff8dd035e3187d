// The realtime listener of a real izwi-server process against hostile bytes sent over raw sockets:
// handshakes with bytes outside ASCII, a model name that is not UTF-8, missing keys and versions,
// idle sessions that must not starve HTTP, appends past the limits, broken frames and the fuzz
// corpus (tests/fuzz/corpus/websocket_handshake). After each case the server still answers HTTP
// and a normal session still transcribes the fixture as the C++ API does.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/base64.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "serving/child_process.h"
#include "serving/whole_transcript.h"

namespace izwi {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kMaxConcurrent = 2;

/// A TCP connection to 127.0.0.1:`port` for raw bytes; reads give up after `timeout_s`.
class RawConnection {
 public:
  struct Frame {
    int opcode = 0;
    std::string payload;
  };

  explicit RawConnection(int port, int timeout_s = 60) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const timeval timeout{timeout_s, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0) << "port " << port;
  }
  ~RawConnection() { close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  /// False when the server has closed the connection.
  bool send(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  /// A masked frame, as a client must send it.
  bool send_frame(int opcode, const std::string& payload) {
    std::string frame(1, static_cast<char>(0x80 | opcode));
    // The length in the fewest bytes, as RFC 6455 requires.
    const int length_bytes = payload.size() < 126 ? 0 : payload.size() < 65536 ? 2 : 8;
    frame += static_cast<char>(0x80 | (length_bytes == 0 ? payload.size() : length_bytes == 2 ? 126 : 127));
    for (int shift = 8 * length_bytes - 8; shift >= 0; shift -= 8) {
      frame += static_cast<char>((payload.size() >> shift) & 0xff);
    }
    const char mask[4] = {0x12, 0x34, 0x56, 0x78};
    frame.append(mask, 4);
    for (size_t i = 0; i < payload.size(); ++i) frame += static_cast<char>(payload[i] ^ mask[i % 4]);
    return send(frame);
  }
  /// The response head up to its blank line; "" when the connection ends first.
  std::string read_head() {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return {};
    }
    std::string head = buffer_.substr(0, end + 4);
    buffer_.erase(0, end + 4);
    return head;
  }
  /// The server's next (unmasked, unfragmented) frame; nullopt when the connection ends first.
  std::optional<Frame> read_frame() {
    if (!need(2)) return std::nullopt;
    Frame frame;
    frame.opcode = static_cast<uint8_t>(buffer_[0]) & 0x0f;
    uint64_t length = static_cast<uint8_t>(buffer_[1]) & 0x7f;
    size_t header = 2;
    if (length >= 126) {
      const size_t bytes = length == 126 ? 2 : 8;
      if (!need(2 + bytes)) return std::nullopt;
      length = 0;
      for (size_t i = 0; i < bytes; ++i) length = (length << 8) | static_cast<uint8_t>(buffer_[2 + i]);
      header += bytes;
    }
    if (!need(header + length)) return std::nullopt;
    frame.payload = buffer_.substr(header, length);
    buffer_.erase(0, header + length);
    return frame;
  }
  /// Reads until the server ends the connection: true when it does within the timeout.
  bool ended_by_server() {
    buffer_.clear();
    char chunk[4096];
    for (;;) {
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n == 0) return true;
      if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;  // a reset ends it too
    }
  }

 private:
  bool fill() {
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  bool need(size_t bytes) {
    while (buffer_.size() < bytes) {
      if (!fill()) return false;
    }
    return true;
  }
  int fd_ = -1;
  std::string buffer_;
};

constexpr const char* kKey = "dGhlIHNhbXBsZSBub25jZQ==";

/// A handshake's request head for `target` with `headers` (each ending in \r\n).
std::string handshake(const std::string& target, const std::string& headers) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + headers +
         "\r\n";
}
std::string valid_headers() { return std::string("Sec-WebSocket-Key: ") + kKey + "\r\nSec-WebSocket-Version: 13\r\n"; }

/// The status of an HTTP response head ("HTTP/1.1 101 ..."); -1 when there is none.
int status_of(const std::string& head) { return head.size() > 12 ? std::atoi(head.c_str() + 9) : -1; }

/// A realtime session over a RawConnection.
class Session {
 public:
  Session(int port, const std::string& target) : connection_(port) {
    connection_.send(handshake(target, valid_headers()));
    status_ = status_of(connection_.read_head());
  }
  int status() const { return status_; }
  RawConnection& connection() { return connection_; }
  bool send(const json& event) { return connection_.send_frame(1, event.dump()); }
  /// The next event of `type` (others skipped); null when the connection ends first.
  json next(const std::string& type) {
    while (std::optional<RawConnection::Frame> frame = connection_.read_frame()) {
      if (frame->opcode != 1) continue;
      json event = json::parse(frame->payload);
      if (event["type"] == type) return event;
    }
    return nullptr;
  }
  /// The error object of the next error event; null when none comes.
  json next_error() {
    const json event = next("error");
    return event.is_null() ? event : event["error"];
  }

 private:
  RawConnection connection_;
  int status_ = -1;
};

json append_event(const std::string& pcm) {
  return {{"type", "input_audio_buffer.append"}, {"audio", base64_encode(pcm)}};
}

/// One izwi-server process (an ASR and a text model, --max-concurrent 2) for the whole suite.
class ServerHostileRealtime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = new Shared;
    testing::write_voxtral_with_tokenizer(shared_->asr.path());
    testing::write_text_model(shared_->text.path());
    // The fixture as a client sends it: 16-bit PCM; the expected text is of the same samples.
    const AudioBuffer audio = read_audio(std::string(IZWI_TEST_DATA_DIR) + "/voxtral-realtime-tiny/audio.wav");
    std::vector<float> samples = to_mono(audio);
    for (float& s : samples) {
      const auto q = static_cast<int16_t>(std::lround(std::clamp(s, -1.0f, 32767.0f / 32768.0f) * 32768.0f));
      s = static_cast<float>(q) / 32768.0f;
      shared_->pcm.push_back(static_cast<char>(q & 0xff));
      shared_->pcm.push_back(static_cast<char>((q >> 8) & 0xff));
    }
    shared_->rate = audio.sample_rate;
    shared_->expected = testing::whole_transcript(shared_->asr.path(), samples, audio.sample_rate).text;
    shared_->server = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{std::string(IZWI_BINARY_DIR) + "/server/izwi-server", "--model",
                                 "asr=" + shared_->asr.path(), "--model", "text=" + shared_->text.path(), "--port", "0",
                                 "--realtime-port", "0", "--max-concurrent", std::to_string(kMaxConcurrent)});
    shared_->port = port_after("listening on http://127.0.0.1:");
    shared_->ws_port = port_after("live transcription on ws://127.0.0.1:");
  }
  static void TearDownTestSuite() {
    if (shared_->server) {
      shared_->server->send_signal(SIGTERM);
      EXPECT_EQ(shared_->server->wait(60s), 0);
    }
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    ASSERT_GT(shared_->port, 0);
    ASSERT_GT(shared_->ws_port, 0);
    ASSERT_FALSE(shared_->expected.empty());
  }

  /// The number after the last ':' of the first line with `marker` (digits up to the path).
  static int port_after(const std::string& marker) {
    while (std::optional<std::string> line = shared_->server->read_line(60s)) {
      const size_t at = line->find(marker);
      if (at != std::string::npos) return std::atoi(line->c_str() + at + marker.size());
    }
    return -1;
  }

  /// The fixture through a normal session in 100 ms appends; "" (and a failure) when it fails.
  static std::string transcribe() {
    Session session(shared_->ws_port, "/v1/realtime?model=asr");
    EXPECT_EQ(session.status(), 101);
    if (session.next("transcription_session.created").is_null()) return {};
    session.send({{"type", "session.update"},
                  {"session",
                   {{"type", "transcription"},
                    {"audio", {{"input", {{"format", {{"type", "audio/pcm"}, {"rate", shared_->rate}}}}}}}}}});
    EXPECT_FALSE(session.next("session.updated").is_null());
    const size_t piece = static_cast<size_t>(shared_->rate) / 10 * 2;
    for (size_t at = 0; at < shared_->pcm.size(); at += piece)
      session.send(append_event(shared_->pcm.substr(at, piece)));
    session.send({{"type", "input_audio_buffer.commit"}});
    const json completed = session.next("conversation.item.input_audio_transcription.completed");
    EXPECT_FALSE(completed.is_null()) << "no completion";
    return completed.is_null() ? std::string() : completed["transcript"].get<std::string>();
  }

  /// The server answers HTTP and transcribes the fixture as before.
  static void expect_serving() {
    httplib::Client http("127.0.0.1", shared_->port);
    const httplib::Result health = http.Get("/health");
    ASSERT_TRUE(health) << "the server is gone";
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(transcribe(), shared_->expected);
  }

  /// Polls /metrics until the asr model runs `running` requests; false after 60 s.
  static bool wait_running(int running) {
    httplib::Client http("127.0.0.1", shared_->port);
    const std::string want = "vllm:num_requests_running{model_name=\"asr\"} " + std::to_string(running) + "\n";
    for (int i = 0; i < 6000; ++i) {
      const httplib::Result metrics = http.Get("/metrics");
      if (metrics && metrics->body.find(want) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  struct Shared {
    izwi::testing::TempDir asr, text;
    std::string pcm;
    int rate = 0;
    std::string expected;
    std::unique_ptr<testing::ChildProcess> server;
    int port = -1;
    int ws_port = -1;
  };
  static Shared* shared_;
};
ServerHostileRealtime::Shared* ServerHostileRealtime::shared_ = nullptr;

TEST_F(ServerHostileRealtime, BytesOutsideAsciiInTheTargetAre400) {
  for (const std::string target : {"/v1/realtime\xff", "/v1/\xff\xfe?model=asr", "/v1/realtime?model=\xff\xfe"}) {
    SCOPED_TRACE(target);
    Session session(shared_->ws_port, target);
    EXPECT_EQ(session.status(), 400);
    expect_serving();
  }
}

TEST_F(ServerHostileRealtime, AModelNameThatIsNotUtf8IsAnErrorEvent) {
  Session session(shared_->ws_port, "/v1/realtime?model=%FF%FE");
  ASSERT_EQ(session.status(), 101);
  const json error = session.next_error();
  ASSERT_FALSE(error.is_null());
  EXPECT_EQ(error["param"], "model");
  EXPECT_NE(error["message"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos)
      << "the bytes come back as U+FFFD: " << error["message"];
  // The session goes on: an append without a model is the next error.
  session.send(append_event(std::string(3200, '\0')));
  EXPECT_EQ(session.next_error()["param"], "model");
  expect_serving();
}

TEST_F(ServerHostileRealtime, AHandshakeWithoutAProperKeyOrVersionIs400) {
  const std::string key = std::string("Sec-WebSocket-Key: ") + kKey + "\r\n";
  for (const std::string headers :
       {std::string("Sec-WebSocket-Version: 13\r\n"), std::string(), key, key + "Sec-WebSocket-Version: 8\r\n",
        std::string("Sec-WebSocket-Key: abc\r\nSec-WebSocket-Version: 13\r\n")}) {
    SCOPED_TRACE(headers);
    RawConnection connection(shared_->ws_port);
    connection.send(handshake("/v1/realtime", headers));
    EXPECT_EQ(status_of(connection.read_head()), 400);
  }
  expect_serving();
}

TEST_F(ServerHostileRealtime, IdleSessionsDoNotTurnHttpRequestsAway) {
  // Each idle session holds an open item: the realtime pool is full, HTTP's is not touched.
  std::vector<std::unique_ptr<Session>> idle;
  for (int i = 0; i <= kMaxConcurrent; ++i) {
    idle.push_back(std::make_unique<Session>(shared_->ws_port, "/v1/realtime?model=asr"));
    ASSERT_EQ(idle.back()->status(), 101);
    idle.back()->send(append_event(std::string(6400, '\0')));
  }
  ASSERT_TRUE(wait_running(kMaxConcurrent));
  EXPECT_EQ(idle.back()->next_error()["code"], "rate_limit_exceeded") << "one more live item than --max-concurrent";

  httplib::Client http("127.0.0.1", shared_->port);
  http.set_read_timeout(120, 0);
  const json chat = {{"model", "text"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}};
  for (int i = 0; i <= kMaxConcurrent; ++i) {
    const httplib::Result res = http.Post("/v1/chat/completions", chat.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }
  idle.clear();
  ASSERT_TRUE(wait_running(0)) << "the closed sessions' items still run";
  expect_serving();
}

TEST_F(ServerHostileRealtime, AnAppendPastTheLimitsIsAnErrorEventAndTheSessionGoesOn) {
  Session session(shared_->ws_port, "/v1/realtime?model=asr");
  ASSERT_EQ(session.status(), 101);
  // More than OpenAI's 15 MiB of base64 in one append (the message itself is under 16 MiB).
  session.send(append_event(std::string((15u << 20) / 4 * 3 + 6, '\0')));
  json error = session.next_error();
  EXPECT_EQ(error["param"], "audio");
  EXPECT_NE(error["message"].get<std::string>().find("15 MiB"), std::string::npos) << error;
  session.send({{"type", "input_audio_buffer.commit"}});
  EXPECT_EQ(session.next_error()["code"], "input_audio_buffer_commit_empty") << "the append was dropped";

  // An item takes at most 600 s: at 8 kHz, 300 s go in, 301 s more do not.
  session.send({{"type", "session.update"},
                {"session", {{"type", "transcription"}, {"audio", {{"input", {{"format", {{"rate", 8000}}}}}}}}}});
  ASSERT_FALSE(session.next("session.updated").is_null());
  session.send(append_event(std::string(2 * 8000 * 300, '\0')));
  session.send(append_event(std::string(2 * 8000 * 301, '\0')));
  error = session.next_error();
  EXPECT_EQ(error["code"], "input_audio_buffer_full");
  EXPECT_NE(error["message"].get<std::string>().find("600 s"), std::string::npos) << error;
  session.send({{"type", "input_audio_buffer.clear"}});
  EXPECT_FALSE(session.next("input_audio_buffer.cleared").is_null());

  // A message past 16 MiB ends the connection cleanly at its header: 1009, message too big.
  session.connection().send(std::string("\x81\xff\0\0\0\0\x01\0\0\x01\x01\x02\x03\x04", 14));
  std::optional<RawConnection::Frame> close;
  while ((close = session.connection().read_frame()) && close->opcode != 8) {
  }
  ASSERT_TRUE(close) << "no close frame";
  ASSERT_GE(close->payload.size(), 2u);
  EXPECT_EQ((static_cast<uint8_t>(close->payload[0]) << 8) | static_cast<uint8_t>(close->payload[1]), 1009);
  expect_serving();
}

TEST_F(ServerHostileRealtime, BrokenFramesEndOnlyTheirConnection) {
  const std::string mask = "\x01\x02\x03\x04";
  const std::vector<std::string> frames = {
      std::string("\x81\xff\x7f\xff\xff\xff\xff\xff\xff\xff", 10) + mask,  // a 2^63-byte payload
      std::string("\x81\x05hello", 7),                                     // unmasked
      std::string("\x81\x82", 2) + mask + std::string("\xfe\xfd"),         // masked bytes that are not UTF-8
      std::string("\x8f\x80", 2) + mask,                                   // a reserved opcode
  };
  for (const std::string& frame : frames) {
    Session session(shared_->ws_port, "/v1/realtime?model=asr");
    ASSERT_EQ(session.status(), 101);
    session.connection().send(frame);
    EXPECT_TRUE(session.connection().ended_by_server());
  }
  // A binary frame is an error event; the session goes on.
  Session session(shared_->ws_port, "/v1/realtime?model=asr");
  ASSERT_EQ(session.status(), 101);
  session.connection().send_frame(2, "\x00\x01");
  EXPECT_EQ(session.next_error()["code"], "invalid_value");
  session.send({{"type", "input_audio_buffer.commit"}});
  EXPECT_EQ(session.next_error()["code"], "input_audio_buffer_commit_empty");
  expect_serving();
}

TEST_F(ServerHostileRealtime, TheFuzzCorpusLeavesTheListenerServing) {
  const std::filesystem::path corpus = std::filesystem::path(IZWI_SERVING_DIR) / "../fuzz/corpus/websocket_handshake";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    RawConnection connection(shared_->ws_port, 2);  // some wait for more bytes: a short read timeout
    connection.send(bytes);
    connection.ended_by_server();
    ++replayed;
  }
  EXPECT_GE(replayed, 10);
  expect_serving();
}

}  // namespace
}  // namespace izwi
