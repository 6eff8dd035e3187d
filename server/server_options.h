#pragma once
// What izwi-server is started with (its command line, see main.cpp and docs/serving.md).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "izwi/config.h"

namespace izwi::server {

/// What one HTTP connection may hold (docs/serving.md#limits).
struct ConnectionLimits {
  std::chrono::milliseconds header_timeout{10000};  ///< request line + headers, from their first byte
  int32_t max_connections = 512;                    ///< open at once; more are answered 503 and closed
  int32_t max_connections_per_client = 128;         ///< from one address; more are answered 429 and closed
  size_t max_body_bytes = 32u << 20;                ///< 413 beyond, on the wire and decompressed
};

struct ServerOptions {
  std::vector<std::pair<std::string, std::string>> models;  ///< NAME, DIR
  std::string host = "127.0.0.1";
  int port = 8000;              ///< 0 = any free port (printed at start)
  int realtime_port = -1;       ///< live-transcription WebSocket; 0 = any free port, -1 = none
  EngineConfig engine;          ///< every model's engine
  int32_t max_concurrent = 64;  ///< engine requests at once; 429 beyond
  std::string api_key;          ///< empty = no authentication
  ConnectionLimits connections;
  int32_t shutdown_grace_ms = 10000;  ///< SIGTERM: running requests get this long to finish
  std::string kv_events_endpoint;     ///< ZeroMQ endpoint for KV events; empty = none published
  std::string pod_name;               ///< KV-event topics are kv@<pod_name>@<model>
};

/// "NAME=DIR" -> {NAME, DIR}; izwi::Error(InvalidArgument) naming the argument otherwise.
std::pair<std::string, std::string> parse_model_spec(const std::string& spec);

}  // namespace izwi::server
