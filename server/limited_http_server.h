#pragma once
// httplib::Server with the limits a listener open to untrusted clients needs, which
// cpp-httplib 0.11 does not enforce itself: a deadline for a request's line and headers
// (slowloris), a cap on connections in all and per client address, a cap on the body bytes read
// from the wire (a chunked body has no Content-Length to check), and no exception leaving a
// connection's thread (that would be std::terminate).

#include <httplib.h>

#include <map>
#include <mutex>
#include <string>

#include "server/server_options.h"

namespace izwi::server {

class LimitedHttpServer : public httplib::Server {
 public:
  /// One thread per admitted connection (a stream holds its thread while it runs), and a few more
  /// to refuse connections over the caps at once.
  explicit LimitedHttpServer(const ConnectionLimits& limits);

  /// Call after binding. httplib listens with a backlog of 5: connections arriving faster than it
  /// accepts them beyond that wait for the client's SYN retries (1 s, 3 s, ...).
  void widen_listen_backlog();

  /// Whether the request being served on this thread sent more body bytes than max_body_bytes
  /// (its body stops being read there).
  static bool body_over_limit();
  /// Call on every response: one with an error status to a request that sent a body closes the
  /// connection, as the rest of that body may still be unread.
  static void close_if_body_unread(const httplib::Request& req, httplib::Response& res);

 private:
  bool process_and_close_socket(socket_t sock) override;
  /// Counts the connection in; false (and an answer sent) when it is over a cap.
  bool admit(socket_t sock, const std::string& client);
  void release(const std::string& client);

  ConnectionLimits limits_;
  std::mutex mutex_;
  int32_t open_ = 0;
  std::map<std::string, int32_t> per_client_;
};

}  // namespace izwi::server
