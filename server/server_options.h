#pragma once
// What izwi-server is started with (its command line, see main.cpp and docs/serving.md).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/config.h"
#include "izwi/tool_calls.h"

namespace izwi::server {

/// What one HTTP connection may hold (docs/serving.md#limits).
struct ConnectionLimits {
  std::chrono::milliseconds header_timeout{10000};  ///< request line + headers, from their first byte
  int32_t max_connections = 512;                    ///< open at once; more are answered 503 and closed
  int32_t max_connections_per_client = 128;         ///< from one address; more are answered 429 and closed
  size_t max_body_bytes = 32u << 20;                ///< 413 beyond, on the wire and decompressed
};

/// What POST /v1/audio/voices takes and how many voices a server holds (docs/serving.md#voices).
struct VoiceLimits {
  size_t max_upload_bytes = 25u << 20;  ///< the reference recording's file; 413 naming `file` beyond
  double max_seconds = 60.0;            ///< the reference recording's duration; 400 naming `file` beyond
  size_t max_name_bytes = 128;          ///< a voice's `name`
  size_t max_transcript_bytes = 4096;   ///< the recording's `transcript`, as `input` of /v1/audio/speech
  int32_t max_voices = 1000;            ///< voices held at once; creating more is refused
};

/// One served model: --model NAME=DIR, and its engine's config when --model-config NAME=FILE gives one.
struct ModelSpec {
  std::string name;
  std::string dir;
  std::optional<EngineConfig> engine;  ///< none: ServerOptions::engine (--config)
};

struct ServerOptions {
  std::vector<ModelSpec> models;
  std::string host = "127.0.0.1";
  int port = 8000;              ///< 0 = any free port (printed at start)
  int realtime_port = -1;       ///< live-transcription WebSocket; 0 = any free port, -1 = none
  EngineConfig engine;          ///< the engine of every model without a config of its own
  int32_t max_concurrent = 64;  ///< engine requests at once; 429 beyond
  std::string api_key;          ///< empty = no authentication
  ConnectionLimits connections;
  int32_t shutdown_grace_ms = 10000;  ///< SIGTERM: running requests get this long to finish
  std::string kv_events_endpoint;     ///< ZeroMQ endpoint for KV events; empty = none published
  std::string pod_name;               ///< KV-event topics are kv@<pod_name>@<model>
  bool log_requests = true;           ///< one info line per HTTP request on stderr (server_log.h)
  std::string voices_dir;             ///< where cloned voices are kept; empty = in memory only
  VoiceLimits voices;
  /// --tool-call-parser: how every model's tool calls are parsed; none = each model's chat template decides.
  std::optional<ToolCallFormat> tool_call_parser;
};

/// "NAME=DIR" -> {NAME, DIR}; izwi::Error(InvalidArgument) naming the argument otherwise.
ModelSpec parse_model_spec(const std::string& spec);

/// Each --model-config "NAME=FILE" gives the model NAME the EngineConfig JSON in FILE (fields it
/// leaves out take EngineConfig's defaults, as with --config). InvalidArgument naming the
/// argument when it is not NAME=FILE, no model is named NAME, or NAME is given twice; the file's
/// own errors name the file.
void add_model_configs(std::vector<ModelSpec>& models, const std::vector<std::string>& specs);

}  // namespace izwi::server
