// izwi-server: an OpenAI-compatible HTTP server over izwi engines (docs/serving.md).

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "examples/common/cli_main.h"
#include "server/http_server.h"
#include "server/server_options.h"

namespace {

int g_signal_pipe[2] = {-1, -1};

void on_signal(int signal) {
  const auto byte = static_cast<unsigned char>(signal);
  (void)!write(g_signal_pipe[1], &byte, 1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = izwi::cli::program_name(argv[0]);
  return izwi::cli::run_main(program.c_str(), [&] {
    izwi::server::ServerOptions options;
    std::vector<std::string> models, model_configs;
    std::string config_path;
    izwi::server::ConnectionLimits& limits = options.connections;
    double max_body_mb = static_cast<double>(limits.max_body_bytes) / (1 << 20);
    double header_timeout_s = limits.header_timeout.count() / 1000.0;
    double grace_s = options.shutdown_grace_ms / 1000.0;
    izwi::server::VoiceLimits& voice_limits = options.voices;
    double voice_upload_mb = static_cast<double>(voice_limits.max_upload_bytes) / (1 << 20);
    CLI::App app{"izwi-server: an OpenAI-compatible HTTP server over izwi engines"};
    app.add_option("--model", models, "NAME=DIR: serve the model folder DIR as NAME (repeatable)")->required();
    app.add_option("--host", options.host, "Address to listen on")->capture_default_str();
    app.add_option("--port", options.port, "Port to listen on; 0 = any free port")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    int realtime_port = -2;  // not given: --port + 1
    app.add_option("--realtime-port", realtime_port,
                   "Live-transcription WebSocket port; 0 = any free port, -1 = none; default --port + 1 (any free port "
                   "when --port is 0)")
        ->check(CLI::Range(-1, 65535));
    app.add_option("--config", config_path, "EngineConfig JSON for every model's engine");
    app.add_option("--model-config", model_configs,
                   "NAME=FILE: EngineConfig JSON for the model NAME's engine, instead of --config (repeatable)");
    app.add_option("--max-concurrent", options.max_concurrent, "Engine requests at once; more get 429")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("--api-key", options.api_key, "Require 'Authorization: Bearer KEY' on /v1/ routes");
    app.add_option("--max-body-mb", max_body_mb,
                   "Largest request body, as sent and decompressed (chunked and gzip too); larger get 413")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 4096.0));
    app.add_option("--header-timeout", header_timeout_s,
                   "Seconds a request's line and headers may take to arrive, from their first byte; slower "
                   "connections are closed")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--max-connections", limits.max_connections,
                   "Open HTTP connections (one thread each); more get 503; must exceed --max-concurrent")
        ->capture_default_str()
        ->check(CLI::Range(2, 65536));
    app.add_option("--max-connections-per-client", limits.max_connections_per_client,
                   "Open HTTP connections from one client address; more get 429")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    app.add_option("--shutdown-grace", grace_s, "Seconds running requests get to finish on SIGINT/SIGTERM")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 3600.0));
    app.add_option("--kv-events", options.kv_events_endpoint,
                   "ZeroMQ endpoint to publish KV-cache events on, vLLM's format (docs/kv_events.md)");
    app.add_option("--pod-name", options.pod_name, "Pod name in KV-event topics kv@POD@MODEL; default: host name");
    app.add_flag("--log-requests,!--no-log-requests", options.log_requests,
                 "One line per HTTP request on stderr: method, route, model, status, tokens, latency (default on)");
    app.add_option("--voices-dir", options.voices_dir,
                   "Directory that keeps the voices made with POST /v1/audio/voices across restarts; default: in "
                   "memory only");
    app.add_option("--max-voices", voice_limits.max_voices, "Voices held at once; creating more is refused")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    app.add_option("--max-voice-upload-mb", voice_upload_mb, "Largest reference recording for a voice; larger get 413")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 4096.0));
    app.add_option("--max-voice-seconds", voice_limits.max_seconds, "Longest reference recording for a voice")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 3600.0));
    std::string tool_call_parser;
    app.add_option("--tool-call-parser", tool_call_parser,
                   "How models write tool calls: hermes, llama3_json or mistral; default: from each chat template")
        ->check(CLI::IsMember({"hermes", "llama3_json", "mistral"}));
    if (const int code = izwi::cli::parse_command_line(app, argc, argv); code >= 0) return code;
    for (const std::string& spec : models) options.models.push_back(izwi::server::parse_model_spec(spec));
    izwi::server::add_model_configs(options.models, model_configs);
    if (!config_path.empty()) options.engine = izwi::EngineConfig::from_json_file(config_path);
    if (!tool_call_parser.empty()) options.tool_call_parser = izwi::tool_call_format_from_string(tool_call_parser);
    limits.max_body_bytes = static_cast<size_t>(max_body_mb * (1 << 20));
    voice_limits.max_upload_bytes = static_cast<size_t>(voice_upload_mb * (1 << 20));
    limits.header_timeout = std::chrono::milliseconds(static_cast<int64_t>(header_timeout_s * 1000.0));
    options.shutdown_grace_ms = static_cast<int32_t>(grace_s * 1000.0);
    options.realtime_port = realtime_port != -2 ? realtime_port : options.port == 0 ? 0 : options.port + 1;
    if (options.pod_name.empty()) {
      char host[256] = {};
      options.pod_name = gethostname(host, sizeof(host) - 1) == 0 ? host : "izwi";
    }

    // SIGINT / SIGTERM may land on any thread (libraries start threads before main), so the
    // handler only writes the signal to a pipe that one thread waits on.
    if (pipe(g_signal_pipe) != 0) throw std::runtime_error("cannot create the signal pipe");
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is handled where the write fails

    izwi::server::HttpServer server(options);
    std::printf("izwi-server: listening on http://%s:%d\n", options.host.c_str(), server.port());
    if (server.realtime_port() >= 0) {
      std::printf("izwi-server: live transcription on ws://%s:%d/v1/realtime\n", options.host.c_str(),
                  server.realtime_port());
    }
    if (!options.kv_events_endpoint.empty())
      std::printf("izwi-server: KV events on %s\n", server.kv_events_endpoint().c_str());
    std::fflush(stdout);
    std::thread waiter([&] {
      unsigned char signal = 0;
      while (read(g_signal_pipe[0], &signal, 1) < 0 && errno == EINTR) {
      }
      if (signal == 0) return;  // woken by main: the listener failed
      std::printf("izwi-server: %s, shutting down\n", signal == SIGINT ? "SIGINT" : "SIGTERM");
      std::fflush(stdout);
      server.shutdown();
    });
    const bool served = server.run();
    if (!served) {
      const unsigned char wake = 0;  // the listener failed: wake the waiter
      (void)!write(g_signal_pipe[1], &wake, 1);
    }
    waiter.join();
    return served ? 0 : 1;
  });
}
