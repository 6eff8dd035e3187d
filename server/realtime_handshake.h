#pragma once
// The realtime listener's handshake checks, apart from the socket so the fuzz target
// (tests/fuzz/fuzz_websocket_handshake.cpp) drives them in-process: the request head websocketpp
// parses is refused with 400 before websocketpp acts on it when it is no RFC 6455 handshake
// (websocketpp would answer a head without Sec-WebSocket-Version as the 2010 draft, 500 when the
// draft's key bytes are missing), and the route's errors are decided from the resource.

#include <websocketpp/http/request.hpp>

#include <optional>
#include <string>

#include "server/api_error.h"

namespace izwi::server {

constexpr const char* kRealtimePath = "/v1/realtime";

/// Why a complete request head is refused with 400 (naming the header or the target), or "" when
/// websocketpp may take it: the target must be printable ASCII (percent-encode other bytes), and
/// a WebSocket upgrade needs Sec-WebSocket-Version 13 and a 24-character Sec-WebSocket-Key.
std::string handshake_problem(const websocketpp::http::parser::request& request);

/// websocketpp's request parser plus handshake_problem: websocketpp answers the
/// http::exception it throws with that status, the problem as the reason phrase.
class CheckedRequest : public websocketpp::http::parser::request {
 public:
  size_t consume(const char* buf, size_t len) {
    const size_t used = request::consume(buf, len);
    if (ready()) {
      const std::string problem = handshake_problem(*this);
      if (!problem.empty())
        throw websocketpp::http::exception(problem, websocketpp::http::status_code::bad_request, problem);
    }
    return used;
  }
};

/// A websocketpp config (core or asio, with its transport template) whose requests are
/// CheckedRequest.
template <typename Base, template <typename> class Transport>
struct CheckedConfig : Base {
  typedef CheckedConfig type;
  typedef CheckedRequest request_type;
  struct transport_config : Base::transport_config {
    typedef CheckedRequest request_type;
  };
  typedef Transport<transport_config> transport_type;
};

/// The percent-decoded value of `name` in the query of `resource` ("/path?a=1&b=2"); "" if absent.
/// The bytes may be anything, valid UTF-8 or not.
std::string query_parameter(const std::string& resource, const std::string& name);

/// The error a handshake for `resource` gets (404 off kRealtimePath, 401 when not `authorized`),
/// or nullopt when it may open a session.
std::optional<ApiError> route_error(const std::string& resource, bool authorized);

}  // namespace izwi::server
