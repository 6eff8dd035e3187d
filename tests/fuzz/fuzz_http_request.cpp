// Fuzz target: bytes as a client sends them to izwi-server's HTTP listener (request line, headers,
// body), over a real loopback TCP connection to an in-process server (tests/data/llama-tiny, an API
// key, a short header deadline). The server answers or closes the connection; whatever it
// sends starts as an HTTP/1.1 status line; and after every input it still answers GET /health. An
// exception or signal in the server ends this process, which is the crash the fuzzer looks for.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "server/http_server.h"

namespace {

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz_http_request: %s\n", what);
  std::abort();
}

// A connection to the server; -1 while it does not listen yet.
int connect_to_server(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  require(fd >= 0, "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
  ::close(fd);
  return -1;
}

izwi::server::HttpServer& server() {
  static izwi::server::HttpServer* s = [] {
    izwi::server::ServerOptions options;
    options.models = {{"tiny", std::string(IZWI_TEST_DATA_DIR) + "/llama-tiny"}};
    options.host = "127.0.0.1";
    options.port = 0;
    options.api_key = "fuzz-key";  // inputs that carry it reach the routes behind authentication
    options.connections.header_timeout = std::chrono::milliseconds(250);
    options.connections.max_body_bytes = 64u << 10;  // a corpus file can pass it
    auto* made = new izwi::server::HttpServer(options);
    std::thread([made] { made->run(); }).detach();  // serves until the process ends
    // The port is bound; the thread starts listening on it shortly.
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const int fd = connect_to_server(made->port());
      if (fd >= 0) {
        ::close(fd);
        return made;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::fprintf(stderr, "fuzz_http_request: the server does not listen\n");
    std::abort();
  }();
  return *s;
}

// The server's answer to `request`, read until it closes the connection or sends nothing for
// 0.4 s (a kept-alive connection; an unfinished head is answered 400 at the 0.25 s deadline).
// The write side stays open: the server, as httplib, answers no client that has half-closed its
// connection.
std::string exchange(const std::string& request) {
  const int fd = connect_to_server(server().port());
  require(fd >= 0, "the server takes no connection");
  const timeval timeout{0, 400000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (an error answered before the body)
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string answer = exchange(std::string(reinterpret_cast<const char*>(data), size));
  require(answer.empty() || answer.rfind("HTTP/1.1 ", 0) == 0, "the answer is not an HTTP/1.1 response");
  require(exchange("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0,
          "GET /health is not answered 200 after the input");
  return 0;
}
