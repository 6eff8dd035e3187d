#include "server/realtime_server.h"

#include <websocketpp/config/asio_no_tls.hpp>
#include <websocketpp/server.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "common/check.h"
#include "common/logging.h"
#include "server/api_error.h"
#include "server/realtime_handshake.h"

namespace izwi::server {

namespace {

using WsServer = websocketpp::server<CheckedConfig<websocketpp::config::asio, websocketpp::transport::asio::endpoint>>;
constexpr const char* kProtocol = "realtime";
constexpr const char* kKeyProtocolPrefix = "openai-insecure-api-key.";
// A message past this closes the connection (1009, "message too big"); an append up to it that
// carries more than the per-append limit (kMaxAppendBase64) is answered with an error event.
constexpr size_t kMaxMessageBytes = 16u << 20;
constexpr auto kCloseWait = std::chrono::seconds(2);

}  // namespace

struct RealtimeServer::State {
  WsServer ws;
  std::string api_key;
  SessionFactory make_session;
  // Touched on the server's thread only (handlers and the posted shutdown).
  std::map<websocketpp::connection_hdl, std::unique_ptr<RealtimeConnection>,
           std::owner_less<websocketpp::connection_hdl>>
      sessions;
  std::thread thread;
  std::future<void> finished;
  int port = 0;
  bool stopped = false;

  /// A browser cannot set headers on a WebSocket: as with OpenAI's, the key may instead come as
  /// the subprotocol "openai-insecure-api-key.KEY" (offered beside "realtime", which is selected).
  bool authorized(WsServer::connection_type& connection) const {
    if (api_key.empty() || connection.get_request_header("Authorization") == "Bearer " + api_key) return true;
    const std::vector<std::string>& protocols = connection.get_requested_subprotocols();
    return std::find(protocols.begin(), protocols.end(), kKeyProtocolPrefix + api_key) != protocols.end();
  }

  bool validate(websocketpp::connection_hdl hdl) {
    const WsServer::connection_ptr connection = ws.get_con_from_hdl(hdl);
    const std::optional<ApiError> error = route_error(connection->get_resource(), authorized(*connection));
    if (!error) {
      const std::vector<std::string>& protocols = connection->get_requested_subprotocols();
      if (std::find(protocols.begin(), protocols.end(), kProtocol) != protocols.end()) {
        connection->select_subprotocol(kProtocol);
      }
      return true;
    }
    connection->set_status(static_cast<websocketpp::http::status_code::value>(error->status()));
    connection->set_body(error->body().dump());  // ASCII: handshake_problem refused other targets
    connection->append_header("Content-Type", "application/json");
    return false;
  }

  void open(websocketpp::connection_hdl hdl) {
    const std::string model = query_parameter(ws.get_con_from_hdl(hdl)->get_resource(), "model");
    RealtimeConnection::Send send = [this, hdl](const std::string& message) {
      std::error_code ignored;  // a connection already closing drops what is still sent to it
      ws.send(hdl, message, websocketpp::frame::opcode::text, ignored);
    };
    sessions[hdl] = make_session(model, std::move(send));
  }

  void message(websocketpp::connection_hdl hdl, const WsServer::message_ptr& message) {
    const auto it = sessions.find(hdl);
    if (it == sessions.end()) return;
    if (message->get_opcode() != websocketpp::frame::opcode::text) {
      it->second->reject(ApiError(400, "events are JSON text frames, not binary ones", {}, "invalid_value"));
      return;
    }
    it->second->on_message(message->get_payload());
  }

  void close(websocketpp::connection_hdl hdl) { sessions.erase(hdl); }

  /// Runs a handler of the connection `hdl`; what it throws is logged and ends that connection
  /// only (an open one closes with 1011, a handshake is refused with 500), never the loop every
  /// other connection shares.
  template <typename Handler>
  auto guarded(websocketpp::connection_hdl hdl, const char* what, Handler handler) noexcept -> decltype(handler()) {
    try {
      return handler();
    } catch (const std::exception& e) {
      logger()->error("realtime: the {} handler failed, ending its connection: {}", what, e.what());
    } catch (...) {
      logger()->error("realtime: the {} handler failed, ending its connection", what);
    }
    try {
      sessions.erase(hdl);
      std::error_code ignored;
      const WsServer::connection_ptr connection = ws.get_con_from_hdl(hdl, ignored);
      if (connection && connection->get_state() == websocketpp::session::state::open) {
        connection->close(websocketpp::close::status::internal_endpoint_error, "internal error", ignored);
      } else if (connection && connection->get_state() == websocketpp::session::state::connecting) {
        connection->set_status(websocketpp::http::status_code::internal_server_error);
      }
    } catch (...) {  // the connection is gone already
    }
    return decltype(handler())();
  }

  /// The asio loop; an exception that still escapes a handler is logged and the loop goes on.
  void run() {
    for (;;) {
      try {
        ws.run();
        return;
      } catch (const std::exception& e) {
        logger()->error("realtime: an exception escaped the WebSocket loop: {}", e.what());
      } catch (...) {
        logger()->error("realtime: an exception escaped the WebSocket loop");
      }
    }
  }
};

RealtimeServer::RealtimeServer(const std::string& host, int port, std::string api_key, SessionFactory make_session)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.api_key = std::move(api_key);
  s.make_session = std::move(make_session);
  s.ws.clear_access_channels(websocketpp::log::alevel::all);
  s.ws.clear_error_channels(websocketpp::log::elevel::all);
  s.ws.set_max_message_size(kMaxMessageBytes);
  s.ws.init_asio();
  s.ws.set_reuse_addr(true);
  s.ws.set_validate_handler(
      [&s](websocketpp::connection_hdl hdl) { return s.guarded(hdl, "validate", [&] { return s.validate(hdl); }); });
  s.ws.set_open_handler([&s](websocketpp::connection_hdl hdl) { s.guarded(hdl, "open", [&] { s.open(hdl); }); });
  s.ws.set_message_handler([&s](websocketpp::connection_hdl hdl, const WsServer::message_ptr& message) {
    s.guarded(hdl, "message", [&] { s.message(hdl, message); });
  });
  s.ws.set_close_handler([&s](websocketpp::connection_hdl hdl) { s.guarded(hdl, "close", [&] { s.close(hdl); }); });
  s.ws.set_fail_handler([&s](websocketpp::connection_hdl hdl) { s.guarded(hdl, "fail", [&] { s.close(hdl); }); });
  std::error_code error;
  s.ws.listen(host, std::to_string(port), error);
  if (!error) s.ws.start_accept(error);
  if (error) {
    fail(ErrorCode::InvalidArgument, "cannot listen for WebSockets on {}:{}: {}", host, port, error.message());
  }
  s.port = s.ws.get_local_endpoint(error).port();
  std::packaged_task<void()> run([&s] { s.run(); });
  s.finished = run.get_future();
  s.thread = std::thread(std::move(run));
}

RealtimeServer::~RealtimeServer() { stop(); }

int RealtimeServer::port() const { return state_->port; }

void RealtimeServer::stop() {
  State& s = *state_;
  if (s.stopped) return;
  s.stopped = true;
  asio::post(s.ws.get_io_service(), [&s] {
    std::error_code ignored;
    s.ws.stop_listening(ignored);
    for (const auto& [hdl, session] : s.sessions) {
      s.ws.close(hdl, websocketpp::close::status::going_away, "server shutting down", ignored);
    }
    s.sessions.clear();  // aborts what they still transcribe
  });
  // The loop ends once every closing handshake is done; a client that never answers is cut off.
  if (s.finished.wait_for(kCloseWait) != std::future_status::ready) s.ws.stop();
  s.thread.join();
}

}  // namespace izwi::server
