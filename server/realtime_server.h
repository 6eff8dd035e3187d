#pragma once
// izwi-server's WebSocket listener for live transcription and speech-to-speech conversations
// (ws://HOST:PORT/v1/realtime), on its own port because cpp-httplib does not upgrade
// connections. Each connection is a RealtimeConnection.

#include <functional>
#include <memory>
#include <string>

#include "server/realtime_connection.h"

namespace izwi::server {

class RealtimeServer {
 public:
  /// Makes the session of a new connection from its ?model= (and the send function).
  using SessionFactory =
      std::function<std::unique_ptr<RealtimeConnection>(const std::string& model, RealtimeConnection::Send)>;

  /// Binds `host`:`port` (0 = any free port) and serves on a thread of its own. `api_key` (when
  /// not empty) must come as "Authorization: Bearer KEY" or, from a browser (which cannot set
  /// headers), as the subprotocol "openai-insecure-api-key.KEY"; other connections get 401. Throws
  /// izwi::Error (InvalidArgument) naming the address when it cannot bind.
  RealtimeServer(const std::string& host, int port, std::string api_key, SessionFactory make_session);
  /// stop()s.
  ~RealtimeServer();
  RealtimeServer(const RealtimeServer&) = delete;
  RealtimeServer& operator=(const RealtimeServer&) = delete;

  int port() const;
  /// Stops listening, closes every connection ("going away"), ends its sessions and the thread.
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace izwi::server
