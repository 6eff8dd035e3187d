#pragma once
// izwi-server's HTTP side: the OpenAI routes over the served engines, authentication, admission,
// metrics and a graceful shutdown.

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "server/admission.h"
#include "server/audio_answer_store.h"
#include "server/kv_events_publisher.h"
#include "server/limited_http_server.h"
#include "server/realtime_server.h"
#include "server/served_models.h"
#include "server/server_metrics.h"
#include "server/server_options.h"
#include "server/voice_store.h"

namespace izwi::server {

/// Speech answers kept for their next turn (message.audio.id): the latest 1024, each for an hour.
constexpr int32_t kKeptAudioAnswers = 1024;
constexpr int64_t kAudioAnswerSeconds = 3600;

class HttpServer {
 public:
  /// Loads every model (izwi::Error naming the folder when one does not load), opens the KV-events
  /// socket when asked (naming the endpoint when it cannot) and binds the port (InvalidArgument
  /// naming host and port when it cannot).
  explicit HttpServer(const ServerOptions& options);
  ~HttpServer();
  int port() const { return port_; }
  /// The live-transcription WebSocket's port; -1 when there is none.
  int realtime_port() const { return realtime_ ? realtime_->port() : -1; }
  /// The KV-events socket's endpoint, a wildcard port resolved; empty when none is published.
  std::string kv_events_endpoint() const { return kv_events_ ? kv_events_->endpoint() : std::string(); }
  /// Serves until shutdown() has finished (true), or until the listener fails (false).
  bool run();
  /// Stops taking requests (503), gives running ones the grace period, aborts the rest, closes
  /// the WebSockets, then makes run() return. Call from any thread but a request's.
  void shutdown();

 private:
  void add_routes();
  /// Runs `handler` and answers its ApiError (or any other exception) as OpenAI's error object.
  static void guarded(httplib::Response& res, const std::function<void()>& handler);
  /// The routes that take a body read it through the ContentReader, so --max-body-mb holds after
  /// decompression and for chunked bodies.
  void completions(const std::string& body, httplib::Response& res, bool chat);
  /// /v1/chat/completions with input_audio parts, audio answers or modalities with "audio".
  void chat_audio(const nlohmann::json& request, httplib::Response& res);
  void speech(const std::string& body, httplib::Response& res);
  void transcriptions(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res);
  /// POST /v1/audio/voices: the voice is made on this request's thread, within admission.
  void new_voice(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res);
  std::string read_body(const httplib::ContentReader& reader) const;
  std::string models_json() const;
  /// Puts the request's `model` in its log line when it names a served model.
  void record_model(const nlohmann::json& request) const;

  ServerOptions options_;
  std::unique_ptr<KvEventsPublisher> kv_events_;  ///< declared first: outlives the engines
  ServedModels models_;
  std::unique_ptr<VoiceStore> voices_;
  AudioAnswerStore audio_answers_{kKeptAudioAnswers, kAudioAnswerSeconds};
  std::unique_ptr<ServerMetrics> metrics_;
  Admission admission_;
  LimitedHttpServer http_;
  int port_ = 0;
  std::unique_ptr<RealtimeServer> realtime_;  ///< declared last: its sessions go first
};

}  // namespace izwi::server
