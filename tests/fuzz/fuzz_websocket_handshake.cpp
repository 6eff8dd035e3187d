// Fuzz target: bytes as a client sends them to izwi-server's realtime listener (a handshake, then
// frames), fed in two reads to websocketpp's server connection over its in-memory transport with
// the listener's own checks (server/realtime_handshake.h): CheckedRequest, route_error and
// query_parameter. Nothing may throw out of the connection, a handshake the checks accept must
// satisfy them (printable ASCII target, version 13, a 24-character key), and the route's error
// body must serialize as the listener sends it.

#include <websocketpp/config/core.hpp>
#include <websocketpp/server.hpp>

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "server/realtime_handshake.h"

namespace {

using Server = websocketpp::server<
    izwi::server::CheckedConfig<websocketpp::config::core, websocketpp::transport::iostream::endpoint>>;

void require(bool condition) {
  if (!condition) std::abort();
}

Server& server() {
  static Server* s = [] {
    auto* made = new Server;
    made->clear_access_channels(websocketpp::log::alevel::all);
    made->clear_error_channels(websocketpp::log::elevel::all);
    made->set_max_message_size(1u << 20);
    // As the listener's validate handler: the route's error, its body as JSON.
    made->set_validate_handler([made](websocketpp::connection_hdl hdl) {
      const Server::connection_ptr connection = made->get_con_from_hdl(hdl);
      require(izwi::server::handshake_problem(connection->get_request()).empty());
      const std::string& key = connection->get_request_header("Sec-WebSocket-Key");
      require(key.size() == 24 && connection->get_request_header("Sec-WebSocket-Version") == "13");
      const bool authorized = key[0] != 'x';  // a key starting with x plays a client without the API key
      const std::optional<izwi::server::ApiError> error =
          izwi::server::route_error(connection->get_resource(), authorized);
      if (!error) return true;
      connection->set_status(static_cast<websocketpp::http::status_code::value>(error->status()));
      connection->set_body(error->body().dump());  // throws on bytes that are not UTF-8
      return false;
    });
    // As the session: the model named in the URL, in an event (any bytes, replaced when not UTF-8).
    made->set_open_handler([made](websocketpp::connection_hdl hdl) {
      const Server::connection_ptr connection = made->get_con_from_hdl(hdl);
      const std::string model = izwi::server::query_parameter(connection->get_resource(), "model");
      const nlohmann::json created = {{"type", "transcription_session.created"}, {"model", model}};
      connection->send(created.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    made->set_message_handler([made](websocketpp::connection_hdl hdl, const Server::message_ptr& message) {
      std::error_code ignored;
      made->send(hdl, message->get_payload(), message->get_opcode(), ignored);
    });
    return made;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::ostringstream wire;
  Server::connection_ptr connection = server().get_connection();
  connection->register_ostream(&wire);
  connection->start();
  const char* bytes = reinterpret_cast<const char*>(data);
  const size_t half = size / 2;  // a handshake or frame split across reads, as TCP may deliver it
  connection->read_all(bytes, half);
  connection->read_all(bytes + half, size - half);
  connection->eof();
  // Whatever came back starts as an HTTP response.
  require(wire.str().empty() || wire.str().rfind("HTTP/1.1 ", 0) == 0);
  return 0;
}
