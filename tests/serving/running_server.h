#pragma once
// An izwi-server inside the test process: HttpServer on a free loopback port, served from a
// thread, shut down (gracefully) when the object goes.

#include <nlohmann/json.hpp>

#include <string>
#include <thread>

#include "common/temp_dir.h"
#include "server/http_server.h"

namespace izwi::testing {

class RunningServer {
 public:
  explicit RunningServer(server::ServerOptions options) : server_(with_free_port(std::move(options))) {
    thread_ = std::thread([this] { server_.run(); });
  }
  ~RunningServer() {
    server_.shutdown();
    thread_.join();
  }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;
  int port() const { return server_.port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  server::HttpServer& server() { return server_; }

 private:
  static server::ServerOptions with_free_port(server::ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    return options;
  }
  server::HttpServer server_;
  std::thread thread_;
};

/// The API key of the servers the client tests start.
inline constexpr const char* kTestApiKey = "sk-izwi-test";

/// Options of a server with one random-weight text model, "text" (written into `dir`), behind
/// kTestApiKey: what the client tests of the text routes serve.
server::ServerOptions text_model_options(const TempDir& dir);

/// Runs `command` through the shell; its stdout, and its exit status in `*status`.
std::string run_command(const std::string& command, int* status);

/// Runs the node script tests/serving/`script` with `arguments` (the official npm clients' tests)
/// and returns what it printed, parsed as JSON. Throws, with what it printed (its stderr too),
/// when it exits with a failure or prints no JSON.
nlohmann::json run_node_client(const std::string& script, const std::string& arguments);

}  // namespace izwi::testing
