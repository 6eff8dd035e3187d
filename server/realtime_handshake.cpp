#include "server/realtime_handshake.h"

#include <websocketpp/processors/processor.hpp>

#include <algorithm>

namespace izwi::server {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

}  // namespace

std::string handshake_problem(const websocketpp::http::parser::request& request) {
  const std::string& target = request.get_uri();
  // Refused here, the target (echoed in a 404's JSON) is always ASCII.
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) < '!' || static_cast<unsigned char>(c) > '~';
      })) {
    return "the request target must be printable ASCII (percent-encode other bytes)";
  }
  if (!websocketpp::processor::is_websocket_handshake(request)) {
    return {};  // plain HTTP: websocketpp answers 426 Upgrade Required
  }
  if (request.get_header("Sec-WebSocket-Version") != "13") return "Sec-WebSocket-Version must be 13 (RFC 6455)";
  const std::string& key = request.get_header("Sec-WebSocket-Key");
  if (key.size() != 24 || !std::all_of(key.begin(), key.end(), is_base64_char)) {
    return "Sec-WebSocket-Key must be 16 bytes in base64 (24 characters)";
  }
  return {};
}

std::string query_parameter(const std::string& resource, const std::string& name) {
  const size_t question = resource.find('?');
  if (question == std::string::npos) return {};
  size_t start = question + 1;
  while (start <= resource.size()) {
    size_t end = resource.find('&', start);
    if (end == std::string::npos) end = resource.size();
    const std::string pair = resource.substr(start, end - start);
    if (pair.rfind(name + "=", 0) == 0) {
      std::string value;
      for (size_t i = name.size() + 1; i < pair.size(); ++i) {
        const int hi = pair[i] == '%' && i + 2 < pair.size() ? hex_value(pair[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_value(pair[i + 2]) : -1;
        if (lo >= 0) {
          value += static_cast<char>(hi * 16 + lo);
          i += 2;
        } else {
          value += pair[i] == '+' ? ' ' : pair[i];
        }
      }
      return value;
    }
    start = end + 1;
  }
  return {};
}

std::optional<ApiError> route_error(const std::string& resource, bool authorized) {
  const std::string path = resource.substr(0, resource.find('?'));
  if (path != kRealtimePath) {
    return ApiError(404, "no WebSocket route " + path + "; live transcription is " + kRealtimePath, {}, "unknown_url");
  }
  if (!authorized)
    return ApiError(401, "a valid API key is required: Authorization: Bearer KEY", {}, "invalid_api_key");
  return std::nullopt;
}

}  // namespace izwi::server
