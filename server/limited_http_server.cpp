#include "server/limited_http_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/logging.h"
#include "server/api_error.h"

namespace izwi::server {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// What the request being served on a thread has done so far, for the handlers to read.
struct RequestState {
  bool parsed = false;      ///< its line and headers were read
  bool has_body = false;    ///< it declares a body (Content-Length > 0 or a Transfer-Encoding)
  bool over_limit = false;  ///< its body went past max_body_bytes
  bool close = false;       ///< the connection ends after its response
};

thread_local RequestState* t_request = nullptr;

enum class Ready { Yes, Timeout, Error };

Ready wait_for(socket_t sock, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    pollfd p{sock, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left, 0, INT32_MAX)));
    if (n > 0) return Ready::Yes;
    if (n == 0) return Ready::Timeout;
    if (errno != EINTR) return Ready::Error;
  }
}

void address_of(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t length = sizeof(addr);
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(sock, a, &length) : ::getsockname(sock, a, &length)) != 0) return;
  char host[NI_MAXHOST] = {}, service[NI_MAXSERV] = {};
  if (::getnameinfo(a, length, host, sizeof(host), service, sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

/// A connection's socket as httplib reads and writes it (its SocketStream, which cannot be
/// reached from outside the library), with the header deadline and the body byte count.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(socket_t sock, const ConnectionLimits& limits, milliseconds read_timeout, milliseconds write_timeout)
      : sock_(sock), limits_(limits), read_timeout_(read_timeout), write_timeout_(write_timeout), buffer_(4096) {}

  /// Waits up to `timeout` for the next request's first byte; false when none comes or the
  /// server stops listening meanwhile.
  bool wait_for_request(milliseconds timeout, const std::atomic<socket_t>& listener) {
    if (off_ < size_) return true;  // pipelined behind the previous request
    const Clock::time_point deadline = Clock::now() + timeout;
    while (listener != INVALID_SOCKET && Clock::now() < deadline) {
      switch (wait_for(sock_, POLLIN, std::min(deadline, Clock::now() + milliseconds(100)))) {
        case Ready::Yes:
          return true;
        case Ready::Error:
          return false;
        case Ready::Timeout:
          break;
      }
    }
    return false;
  }
  /// A request begins: its line and headers must be in within the header timeout.
  void start_request(RequestState* request) {
    request_ = request;
    head_deadline_ = Clock::now() + limits_.header_timeout;
    body_bytes_ = 0;
  }

  bool is_readable() const override { return off_ < size_ || wait_for(sock_, POLLIN, read_deadline()) == Ready::Yes; }
  bool is_writable() const override {
    return wait_for(sock_, POLLOUT, Clock::now() + write_timeout_) == Ready::Yes && alive();
  }
  ssize_t read(char* ptr, size_t size) override {
    if (off_ == size_) {
      if (wait_for(sock_, POLLIN, read_deadline()) != Ready::Yes) return -1;
      const ssize_t n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
      if (n <= 0) return n;
      off_ = 0;
      size_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, size_ - off_);
    if (request_->parsed) {
      // Counted as the server consumes them, so a chunked body is held to the limit too.
      if (body_bytes_ + n > limits_.max_body_bytes) {
        request_->over_limit = true;
        return -1;
      }
      body_bytes_ += n;
    }
    std::memcpy(ptr, buffer_.data() + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  Clock::time_point read_deadline() const {
    const Clock::time_point deadline = Clock::now() + read_timeout_;
    return request_->parsed ? deadline : std::min(deadline, head_deadline_);
  }
  /// As httplib: a socket with nothing to read, or with data, is still open; one that reads as
  /// end-of-file was closed by the client.
  bool alive() const {
    if (wait_for(sock_, POLLIN, Clock::now()) != Ready::Yes) return true;
    char byte = 0;
    return ::recv(sock_, &byte, 1, MSG_PEEK) > 0;
  }

  socket_t sock_;
  const ConnectionLimits& limits_;
  milliseconds read_timeout_, write_timeout_;
  std::vector<char> buffer_;
  size_t off_ = 0, size_ = 0;
  RequestState* request_ = nullptr;
  Clock::time_point head_deadline_;
  size_t body_bytes_ = 0;
};

/// Points t_request at a request while it is served on this thread.
class CurrentRequest {
 public:
  explicit CurrentRequest(RequestState* request) { t_request = request; }
  ~CurrentRequest() { t_request = nullptr; }
  CurrentRequest(const CurrentRequest&) = delete;
  CurrentRequest& operator=(const CurrentRequest&) = delete;
};

bool declares_body(const httplib::Request& req) {
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

/// Ends a connection whose last request's body was left unread. The client may still be sending
/// it, and a close now would reset the connection before the client reads the answer: stop
/// writing, then read and drop what comes for up to a second (as nginx's lingering close).
void close_lingering(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
  char sink[4096];
  while (wait_for(sock, POLLIN, deadline) == Ready::Yes && ::recv(sock, sink, sizeof(sink), 0) > 0) {
  }
}

milliseconds to_ms(time_t sec, time_t usec) { return milliseconds(sec * 1000 + usec / 1000); }

}  // namespace

LimitedHttpServer::LimitedHttpServer(const ConnectionLimits& limits) : limits_(limits) {
  const auto threads = static_cast<size_t>(limits.max_connections) + 16;
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  set_payload_max_length(limits.max_body_bytes);  // a Content-Length over it is 413 before any is read
}

void LimitedHttpServer::widen_listen_backlog() { ::listen(svr_sock_, SOMAXCONN); }

bool LimitedHttpServer::body_over_limit() { return t_request != nullptr && t_request->over_limit; }

void LimitedHttpServer::close_if_body_unread(const httplib::Request&, httplib::Response& res) {
  if (t_request == nullptr || res.status < 400 || !(t_request->has_body || t_request->over_limit)) return;
  t_request->close = true;
  res.headers.erase("Keep-Alive");
  res.headers.erase("Connection");
  res.set_header("Connection", "close");
}

bool LimitedHttpServer::process_and_close_socket(socket_t sock) {
  std::string client;
  int client_port = 0;
  address_of(sock, true, client, client_port);
  bool served = false;
  bool body_unread = false;
  if (admit(sock, client)) {
    try {
      ConnectionStream stream(sock, limits_, to_ms(read_timeout_sec_, read_timeout_usec_),
                              to_ms(write_timeout_sec_, write_timeout_usec_));
      // httplib's keep-alive loop (process_server_socket_core), over this stream.
      for (size_t left = keep_alive_max_count_; left > 0; --left) {
        if (!stream.wait_for_request(milliseconds(keep_alive_timeout_sec_ * 1000), svr_sock_)) break;
        RequestState request;
        const CurrentRequest current(&request);
        stream.start_request(&request);
        bool closed = false;
        served = process_request(stream, left == 1, closed, [&](httplib::Request& req) {
          request.parsed = true;
          request.has_body = declares_body(req);
        });
        body_unread = request.close;
        // A request that could not be parsed leaves the stream at an unknown place.
        if (!served || closed || !request.parsed || request.close) break;
      }
    } catch (const std::exception& e) {
      logger()->error("HTTP connection from {}: {}", client, e.what());
    } catch (...) {
      logger()->error("HTTP connection from {}: an exception of unknown type", client);
    }
    if (body_unread) close_lingering(sock);
    release(client);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return served;
}

bool LimitedHttpServer::admit(socket_t sock, const std::string& client) {
  std::string refusal;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int32_t& mine = per_client_[client];
    if (open_ < limits_.max_connections && mine < limits_.max_connections_per_client) {
      ++open_;
      ++mine;
      return true;
    }
    const ApiError error =
        mine >= limits_.max_connections_per_client
            ? ApiError(429,
                       fmt::format("{} connections from {} are open, the most this server takes from one client "
                                   "(--max-connections-per-client)",
                                   mine, client),
                       {}, "too_many_connections")
            : ApiError(503,
                       fmt::format("{} connections are open, the most this server takes (--max-connections)", open_),
                       {}, "too_many_connections");
    const std::string body = error.body().dump();
    refusal = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        error.status(), error.status() == 429 ? "Too Many Requests" : "Service Unavailable", body.size(), body);
    if (mine == 0) per_client_.erase(client);
  }
  // Answered without reading the request, which the client may still be sending.
  (void)::send(sock, refusal.data(), refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return false;
}

void LimitedHttpServer::release(const std::string& client) {
  std::lock_guard<std::mutex> lock(mutex_);
  --open_;
  if (--per_client_[client] == 0) per_client_.erase(client);
}

}  // namespace izwi::server
