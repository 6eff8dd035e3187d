#pragma once
// izwi-server's HTTP side: the OpenAI routes over the served engines, authentication, admission,
// metrics and a graceful shutdown.

#include <httplib.h>

#include <memory>

#include "server/admission.h"
#include "server/served_models.h"
#include "server/server_metrics.h"
#include "server/server_options.h"

namespace izwi::server {

class HttpServer {
 public:
  /// Loads every model (izwi::Error naming the folder when one does not load) and binds the port
  /// (InvalidArgument naming host and port when it cannot).
  explicit HttpServer(const ServerOptions& options);
  ~HttpServer();
  int port() const { return port_; }
  /// Serves until shutdown() has finished (true), or until the listener fails (false).
  bool run();
  /// Stops taking requests (503), gives running ones the grace period, aborts the rest, then
  /// makes run() return. Call from any thread but a request's.
  void shutdown();

 private:
  void add_routes();
  /// Runs `handler` and answers its ApiError (or any other exception) as OpenAI's error object.
  void guarded(const httplib::Request& req, httplib::Response& res,
               const std::function<void(const httplib::Request&, httplib::Response&)>& handler);
  void completions(const httplib::Request& req, httplib::Response& res, bool chat);
  void speech(const httplib::Request& req, httplib::Response& res);
  void transcriptions(const httplib::Request& req, httplib::Response& res);
  std::string models_json() const;

  ServerOptions options_;
  ServedModels models_;
  std::unique_ptr<ServerMetrics> metrics_;
  Admission admission_;
  httplib::Server http_;
  int port_ = 0;
};

}  // namespace izwi::server
