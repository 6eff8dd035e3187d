// izwi-server against hostile clients, as raw bytes over TCP to a real process: each request here
// once killed the server (SIGABRT, SIGSEGV), answered the client's error with a 500 or a 200, let
// one request fill its memory, or let one client hold all its threads. After each, the process
// still answers a normal chat request with the same greedy text as before.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "serving/server_process.h"

namespace izwi {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

/// A TCP connection to 127.0.0.1:`port` from the loopback address `source`; -1 when none.
int connect_to(int port, const char* source = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// What the server sends on `fd` until it closes the connection or `timeout` passes.
std::string read_all(int fd, std::chrono::milliseconds timeout) {
  std::string got;
  char buffer[65536];
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
  }
  return got;
}

/// Sends `head`, then `piece` `repeats` times (until the server stops taking it), while reading
/// the answer; returns the answer.
std::string send_and_read(int port, const std::string& head, const std::string& piece = "", size_t repeats = 0,
                          const char* source = "127.0.0.1") {
  const int fd = connect_to(port, source);
  if (fd < 0) return {};
  std::thread sender([&] {
    if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) < 0) return;
    for (size_t i = 0; i < repeats; ++i) {
      if (::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL) < 0) return;
    }
  });
  const std::string answer = read_all(fd, 60s);
  ::shutdown(fd, SHUT_RDWR);  // wakes a sender the server no longer reads from
  sender.join();
  ::close(fd);
  return answer;
}

int status_of(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}

/// The JSON error object of an answer; null when there is none.
json error_of(const std::string& answer) {
  const size_t body = answer.find("\r\n\r\n");
  if (body == std::string::npos) return nullptr;
  const json parsed = json::parse(answer.substr(body + 4), nullptr, false);
  return parsed.is_object() && parsed.contains("error") ? parsed["error"] : json(nullptr);
}

std::string post_head(const std::string& path, const std::string& extra_headers) {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" +
         extra_headers + "\r\n";
}

long rss_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

/// A 16-bit PCM WAV file, 16 kHz, of `frames` frames of `channels` channels of a quiet tone.
std::string pcm_wav(uint16_t channels, uint32_t frames) {
  std::string wav;
  const auto put = [&](uint32_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) wav += static_cast<char>((value >> (8 * i)) & 0xff);
  };
  const uint32_t data_bytes = frames * channels * 2;
  wav += "RIFF";
  put(36 + data_bytes, 4);
  wav += "WAVEfmt ";
  put(16, 4);
  put(1, 2);  // PCM
  put(channels, 2);
  put(16000, 4);
  put(16000u * channels * 2, 4);
  put(channels * 2u, 2);
  put(16, 2);
  wav += "data";
  put(data_bytes, 4);
  for (uint32_t i = 0; i < frames * channels; ++i) put(i % 2 == 0 ? 0x1000 : 0xf000, 2);
  return wav;
}

/// One izwi-server process (a text and a transcription model, --max-body-mb 1) for the suite.
class HostileHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dirs_ = new Dirs;
    testing::write_text_model(dirs_->text.path());
    testing::write_voxtral_with_tokenizer(dirs_->asr.path());
    server_ = start({"--max-body-mb", "1"}, &port_);
    baseline_ = greedy_text(port_);
  }
  static void TearDownTestSuite() {
    server_->send_signal(SIGTERM);
    EXPECT_EQ(server_->wait(60s), 0);
    server_.reset();
    delete dirs_;
    dirs_ = nullptr;
  }
  static std::unique_ptr<ChildProcess> start(std::vector<std::string> args, int* port) {
    args.insert(args.begin(), {testing::server_binary(), "--model", "text=" + dirs_->text.path(), "--model",
                               "asr=" + dirs_->asr.path(), "--port", "0", "--realtime-port", "-1"});
    auto child = std::make_unique<ChildProcess>(std::move(args), ChildProcess::Stderr::IntoStdout);
    *port = testing::port_after(*child, "listening on http://127.0.0.1:");
    return child;
  }
  /// The greedy reply to a fixed chat request; "" when the server does not answer it.
  static std::string greedy_text(int port) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    const json body = {{"model", "text"},
                       {"messages", {{{"role", "user"}, {"content", "hello there"}}}},
                       {"max_tokens", 8},
                       {"temperature", 0}};
    const httplib::Result r = client.Post("/v1/chat/completions", body.dump(), "application/json");
    if (!r || r->status != 200) return "";
    return json::parse(r->body)["choices"][0]["message"]["content"].get<std::string>();
  }
  static void expect_serving() {
    const std::string text = greedy_text(port_);
    EXPECT_FALSE(text.empty()) << "the server no longer answers a chat request";
    EXPECT_EQ(text, baseline_);
  }

  struct Dirs {
    testing::TempDir text, asr;
  };
  static Dirs* dirs_;
  static std::unique_ptr<ChildProcess> server_;
  static int port_;
  static std::string baseline_;
};

HostileHttp::Dirs* HostileHttp::dirs_ = nullptr;
std::unique_ptr<ChildProcess> HostileHttp::server_;
int HostileHttp::port_ = -1;
std::string HostileHttp::baseline_;

TEST_F(HostileHttp, InvalidUtf8InTheUrlOrMethodIsA4xx) {
  ASSERT_GT(port_, 0);
  ASSERT_FALSE(baseline_.empty());
  // Each once made nlohmann::json throw (type_error 316) while the error object naming the path
  // was written, outside any handler: std::terminate.
  for (const std::string line : {"GET /%FF HTTP/1.1", "GET /v1/%FF%FE HTTP/1.1", "GET /v1/models/%C0%AF HTTP/1.1",
                                 "GET /v1/chat/completions%FF HTTP/1.1", "\xFF\xFE / HTTP/1.1", "POST /v1/%FF HTTP/1.1",
                                 "GET /%FF HTTP/1.1\r\nAuthorization: \xFF"}) {
    const std::string answer = send_and_read(port_, line + "\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_GE(status_of(answer), 400) << line << " -> " << answer;
    EXPECT_LT(status_of(answer), 500) << line << " -> " << answer;
    EXPECT_TRUE(error_of(answer)["message"].is_string()) << line << " -> " << answer;
  }
  expect_serving();
}

TEST_F(HostileHttp, DeepNestingIsRefusedWhenTheBodyIsParsed) {
  const auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  const std::string message = R"({"role": "user", "content": "hi"})";
  for (const size_t depth : {size_t{100000}, size_t{1000}}) {
    // Fields passed on unread: dumped and rendered recursively, they once overflowed the stack.
    for (const std::string& body :
         {R"({"model": "text", "messages": [)" + message + R"(], "tools": )" + nested(depth) + "}",
          R"({"model": "text", "messages": [{"role": "assistant", "content": "", "tool_calls": )" + nested(depth) +
              "}]}",
          R"({"model": "text", "messages": [)" + message + R"(], "chat_template_kwargs": {"a": )" + nested(depth) +
              "}}"}) {
      const std::string answer = send_and_read(
          port_, post_head("/v1/chat/completions", "Content-Length: " + std::to_string(body.size()) + "\r\n") + body);
      EXPECT_EQ(status_of(answer), 400) << answer.substr(0, 300);
      EXPECT_NE(error_of(answer)["message"].get<std::string>().find("deeper than 128 levels"), std::string::npos)
          << answer.substr(0, 300);
    }
  }
  // Nesting within the limit is served.
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60, 0);
  const std::string body = R"({"model": "text", "max_tokens": 2, "messages": [)" + message +
                           R"(], "chat_template_kwargs": {"a": )" + nested(100) + "}}";
  const httplib::Result r = client.Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  expect_serving();
}

TEST_F(HostileHttp, TranscriptionFieldsThatAreNotUtf8Are400) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60, 0);
  const std::string wav = pcm_wav(1, 16000);
  struct Case {
    httplib::MultipartFormDataItems form;
    std::string param;
  };
  const std::vector<Case> cases = {
      {{{"model", "\xFF\xFE", "", ""}, {"file", wav, "a.wav", "audio/wav"}}, "model"},
      {{{"model", "asr", "", ""}, {"response_format", "js\xC0\xAF", "", ""}, {"file", wav, "a.wav", "audio/wav"}},
       "response_format"},
      {{{"model", "asr", "", ""}, {"file", "not audio", "\xFF.wav", "audio/wav"}}, "file"},
  };
  for (const Case& c : cases) {
    const httplib::Result r = client.Post("/v1/audio/transcriptions", c.form);
    ASSERT_TRUE(r) << c.param;
    EXPECT_EQ(r->status, 400) << c.param << " -> " << r->body;
    EXPECT_EQ(json::parse(r->body)["error"]["param"], c.param) << r->body;
  }
  expect_serving();
}

TEST_F(HostileHttp, AudioTooShortForTheLogMelFrontendIs400) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60, 0);
  for (const auto& [channels, frames] : std::vector<std::pair<uint16_t, uint32_t>>{{1, 10}, {1024, 62}}) {
    const httplib::MultipartFormDataItems form = {{"model", "asr", "", ""},
                                                  {"file", pcm_wav(channels, frames), "short.wav", "audio/wav"}};
    const httplib::Result r = client.Post("/v1/audio/transcriptions", form);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << channels << " x " << frames << " -> " << r->body;
    EXPECT_EQ(json::parse(r->body)["error"]["param"], "file") << r->body;
  }
  expect_serving();
}

TEST_F(HostileHttp, BodyLimitHoldsForChunkedAndCompressedBodies) {
  const long rss_before = rss_kb(server_->pid());
  ASSERT_GT(rss_before, 0);
  // 64 MiB in 64 KiB chunks, where --max-body-mb is 1: no Content-Length to check.
  const std::string chunk = "10000\r\n" + std::string(1 << 16, ' ') + "\r\n";
  std::string answer =
      send_and_read(port_, post_head("/v1/chat/completions", "Transfer-Encoding: chunked\r\n"), chunk, 1024);
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
  EXPECT_EQ(error_of(answer)["code"], "request_too_large") << answer.substr(0, 300);
  // 256 KiB of gzip that expands to 256 MiB.
  std::string bomb;
  httplib::detail::gzip_compressor compressor;
  const std::string spaces(256u << 20, ' ');
  ASSERT_TRUE(compressor.compress(spaces.data(), spaces.size(), true, [&](const char* data, size_t n) {
    bomb.append(data, n);
    return true;
  }));
  ASSERT_LT(bomb.size(), 1u << 20);
  for (const std::string path : {"/v1/chat/completions", "/v1/nothing-here"}) {
    answer = send_and_read(
        port_,
        post_head(path, "Content-Encoding: gzip\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n") + bomb);
    EXPECT_EQ(status_of(answer), path == "/v1/nothing-here" ? 404 : 413) << path << ": " << answer.substr(0, 300);
  }
  // Other methods' bodies are not read at all.
  answer = send_and_read(
      port_, "PUT /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n", chunk,
      1024);
  EXPECT_EQ(status_of(answer), 405) << answer.substr(0, 300);
  const long rss_after = rss_kb(server_->pid());
  EXPECT_LT(rss_after - rss_before, 64 * 1024) << rss_before << " kB -> " << rss_after << " kB";

  // A compressed body within the limit is served.
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(60, 0);
  client.set_compress(true);
  const json request = {{"model", "text"},
                        {"messages", {{{"role", "user"}, {"content", "hello there"}}}},
                        {"max_tokens", 8},
                        {"temperature", 0}};
  const httplib::Result r = client.Post("/v1/chat/completions", request.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["choices"][0]["message"]["content"], baseline_);
  expect_serving();
}

TEST_F(HostileHttp, TricklingConnectionsDoNotStarveTheServer) {
  int port = -1;
  std::unique_ptr<ChildProcess> server = start({"--header-timeout", "3", "--max-connections-per-client", "50"}, &port);
  ASSERT_GT(port, 0);
  const std::string baseline = greedy_text(port);
  ASSERT_EQ(baseline, baseline_);
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

  // 200 connections from one address, each sending a header line every half second. An address
  // of their own: the server releases a connection after its answer is sent, so one of this test's
  // earlier requests (the readiness poll, the baseline) may still count for 127.0.0.1 for a moment.
  const char* trickler_address = "127.0.0.3";
  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_to(port, trickler_address);
    ASSERT_GE(fd, 0);
    const std::string line = "POST /v1/chat/completions HTTP/1.1\r\n";
    (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  const Clock::time_point opened = Clock::now();
  std::atomic<bool> trickling{true};
  std::thread trickler([&] {
    while (trickling) {
      for (const int fd : slow) (void)::send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(500ms);
    }
  });

  // Another client is answered at once.
  Clock::time_point asked = Clock::now();
  EXPECT_EQ(status_of(send_and_read(port, health, "", 0, "127.0.0.2")), 200);
  EXPECT_LT(Clock::now() - asked, 1500ms);
  // The same client is refused (429) while its 50 connections trickle, and answered once the
  // 3 s header timeout has closed them.
  int status = status_of(send_and_read(port, health, "", 0, trickler_address));
  EXPECT_EQ(status, 429);
  while (status != 200 && Clock::now() - opened < 10s) {
    status = status_of(send_and_read(port, health, "", 0, trickler_address));
    if (status != 200) std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(status, 200);
  EXPECT_LT(Clock::now() - opened, 6s);
  // By now every trickling connection was either refused at once (429) or closed at its header
  // deadline (400). On 2 busy cores the first may reach theirs before the last are admitted, so
  // more than 50 can be admitted in all.
  std::this_thread::sleep_until(opened + 5s);
  int refused = 0, timed_out = 0, closed = 0;
  for (const int fd : slow) {
    const std::string answer = read_all(fd, 100ms);
    refused += status_of(answer) == 429;
    timed_out += status_of(answer) == 400;
    char byte = 0;
    const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
    closed += n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }
  trickling = false;
  trickler.join();
  for (const int fd : slow) ::close(fd);
  EXPECT_GE(timed_out, 50);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(refused + timed_out, 200);
  EXPECT_EQ(closed, 200) << "a trickling connection is still open "
                         << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - opened).count()
                         << " s after it opened";
  EXPECT_EQ(greedy_text(port), baseline);
  server->send_signal(SIGTERM);
  EXPECT_EQ(server->wait(60s), 0);
}

}  // namespace
}  // namespace izwi
