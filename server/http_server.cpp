#include "server/http_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "common/base64.h"
#include "common/check.h"
#include "common/logging.h"
#include "server/api_error.h"
#include "server/audio_endpoints.h"
#include "server/chat_audio_endpoint.h"
#include "server/json_fields.h"
#include "server/playground.h"
#include "server/server_log.h"
#include "server/text_endpoints.h"
#include "server/voice_endpoints.h"

namespace izwi::server {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string sse(const nlohmann::json& event) { return "data: " + dump_json(event) + "\n\n"; }

/// What the request log says of the request served on this thread (httplib serves a connection's
/// requests one after another on its thread): filled by the pre-routing handler and the route,
/// logged when the response is written, or, for a streamed reply, when the stream ends.
struct AccessRecord {
  Clock::time_point start = Clock::now();
  std::string client, method, path, model, finish;
  int32_t prompt_tokens = -1, completion_tokens = -1;  ///< -1: not a token route
  double audio_seconds = -1;                           ///< audio in (transcription) or out (speech)
};
thread_local std::shared_ptr<AccessRecord> t_record;

/// At most 200 bytes of a client's string with control bytes as '?', so that a log line stays one line.
std::string printable(const std::string& text) {
  std::string out = text.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

void log_request(const AccessRecord& r, int status) {
  std::string line = fmt::format("{} {} {}", r.client, printable(r.method), printable(r.path));
  if (!r.model.empty()) line += fmt::format(" model={}", printable(r.model));
  line += fmt::format(" status={}", status);
  if (r.prompt_tokens >= 0) line += fmt::format(" prompt_tokens={}", r.prompt_tokens);
  if (r.completion_tokens >= 0) line += fmt::format(" completion_tokens={}", r.completion_tokens);
  if (r.audio_seconds >= 0) line += fmt::format(" audio_s={:.2f}", r.audio_seconds);
  if (!r.finish.empty()) line += fmt::format(" finish={}", r.finish);
  line += fmt::format(" {:.1f} ms", std::chrono::duration<double, std::milli>(Clock::now() - r.start).count());
  server_log()->info("{}", line);
}

ApiError body_too_large() {
  return ApiError(413, "the request body is larger than this server takes (--max-body-mb)", {}, "request_too_large");
}

void set_error(httplib::Response& res, const ApiError& error) {
  res.status = error.status();
  res.set_content(dump_json(error.body()), "application/json");
}

/// A multipart form read through `reader`: at most `limit` bytes of part contents.
std::vector<FormField> read_form(const httplib::ContentReader& reader, size_t limit) {
  std::vector<FormField> fields;
  size_t bytes = 0;
  bool over = false;
  const bool complete = reader(
      [&](const httplib::MultipartFormData& part) {
        fields.push_back({part.name, part.filename, {}});
        return true;
      },
      [&](const char* data, size_t n) {
        bytes += n;
        over = bytes > limit;
        if (over || fields.empty()) return false;
        fields.back().content.append(data, n);
        return true;
      });
  if (over || LimitedHttpServer::body_over_limit()) throw body_too_large();
  if (!complete) throw ApiError(400, "the multipart body is malformed or cut short", "file", "invalid_value");
  return fields;
}

/// An engine stream being written into a chunked HTTP response. `on_chunk` turns each chunk into
/// the bytes to send; the stream is aborted (its KV blocks freed) when the client goes away.
struct Reply {
  std::function<std::optional<StreamChunk>()> next;
  std::function<void()> abort;
  std::function<std::string(const StreamChunk&)> on_chunk;
  std::function<void()> on_hangup;       ///< the client left before the last chunk
  std::shared_ptr<void> ticket;          ///< the admission slot, released when the reply ends
  std::shared_ptr<AccessRecord> record;  ///< logged when the reply ends; none when not logged
  int32_t open_choices = 1;              ///< choices (n) whose finished chunk has not come yet
  bool finished = false;
};

void send_reply(httplib::Response& res, const std::string& content_type, std::shared_ptr<Reply> reply,
                bool log_requests) {
  // This reply's log line comes when it ends, not when its status line is written.
  if (log_requests) reply->record = std::exchange(t_record, nullptr);
  res.set_chunked_content_provider(
      content_type,
      [reply](size_t, httplib::DataSink& sink) {
        if (!sink.is_writable()) return false;  // the client is gone: the releaser aborts
        // Runs after the handler, outside httplib's exception handling: an exception here ends
        // this response (the connection closes), not the process.
        try {
          std::optional<StreamChunk> chunk = reply->next();
          if (!chunk) {
            sink.done();
            return true;
          }
          const std::string bytes = reply->on_chunk(*chunk);
          if (!bytes.empty() && !sink.write(bytes.data(), bytes.size())) return false;
          if (chunk->finished && --reply->open_choices == 0) {
            reply->finished = true;
            // The engine is done with it: the slot is free before the client reads the last
            // bytes, not when httplib gets round to the releaser (a client's next request may
            // come first, on another connection).
            reply->ticket.reset();
            sink.done();
          }
          return true;
        } catch (const std::exception& e) {
          logger()->error("HTTP response stream failed: {}", e.what());
          return false;
        }
      },
      [reply](bool) noexcept {
        try {
          if (!reply->finished) {
            reply->abort();
            if (reply->on_hangup) reply->on_hangup();
          }
          if (reply->record) {
            if (!reply->finished && reply->record->finish.empty()) reply->record->finish = "hangup";
            log_request(*reply->record, 200);
          }
        } catch (const std::exception& e) {
          logger()->error("HTTP response stream release failed: {}", e.what());
        }
        reply->ticket.reset();
      });
}

/// The stream of an engine request as next/abort functions sharing its handle.
template <typename Stream>
void attach(Reply& reply, std::shared_ptr<Stream> stream) {
  reply.next = [stream] { return stream->next(); };
  reply.abort = [stream] { stream->abort(); };
}

}  // namespace

HttpServer::HttpServer(const ServerOptions& options)
    : options_(options), admission_(options.max_concurrent), http_(options.connections) {
  if (options.models.empty()) fail(ErrorCode::InvalidArgument, "give at least one --model NAME=DIR");
  // Streams hold their connections while they run, and 429 / health / metrics must still be
  // answered when max_concurrent streams are running.
  if (options.connections.max_connections <= options.max_concurrent) {
    fail(ErrorCode::InvalidArgument, "--max-connections ({}) must be larger than --max-concurrent ({})",
         options.connections.max_connections, options.max_concurrent);
  }
  // Before the models load: a bad --voices-dir is named at once.
  voices_ = std::make_unique<VoiceStore>(options.voices_dir, options.voices.max_voices);
  if (!options.kv_events_endpoint.empty()) kv_events_ = std::make_unique<KvEventsPublisher>(options.kv_events_endpoint);
  for (const ModelSpec& spec : options.models) {
    models_.add(spec, options.engine);
    ServedModel& model = models_.get(spec.name);
    if (options.tool_call_parser) {
      model.tool_call_format = options.tool_call_parser;
    } else if (model.engine->tokenizer() != nullptr) {
      model.tool_call_format = detect_tool_call_format(*model.engine->tokenizer());
    }
    if (kv_events_) {
      models_.get(spec.name).engine->set_kv_event_listener(
          [publisher = kv_events_.get(), topic = fmt::format("kv@{}@{}", options.pod_name, spec.name)](
              const KvEventBatch& batch) { publisher->publish(topic, batch); });
    }
  }
  for (const auto& voice : voices_->list()) {
    const auto& all = models_.all();
    if (std::none_of(all.begin(), all.end(), [&](const auto& m) { return m->name == voice->model; })) {
      server_log()->warn("voice {} ('{}') was made with the model '{}', which is not served", voice->id, voice->name,
                         voice->model);
    }
  }
  metrics_ = std::make_unique<ServerMetrics>(models_);
  add_routes();
  port_ = options.port == 0 ? http_.bind_to_any_port(options.host) : options.port;
  if (port_ <= 0 || (options.port != 0 && !http_.bind_to_port(options.host, options.port))) {
    fail(ErrorCode::InvalidArgument, "cannot listen on {}:{} (in use, or not an address of this machine)", options.host,
         options.port);
  }
  http_.widen_listen_backlog();
  if (options.realtime_port >= 0) {
    realtime_ = std::make_unique<RealtimeServer>(options.host, options.realtime_port, options.api_key,
                                                 [this](const std::string& model, RealtimeConnection::Send send) {
                                                   return make_realtime_connection(models_, *metrics_, admission_,
                                                                                   model, std::move(send));
                                                 });
  }
}

HttpServer::~HttpServer() {
  realtime_.reset();
  models_.shutdown();
}

bool HttpServer::run() { return http_.listen_after_bind() || admission_.draining(); }

void HttpServer::shutdown() {
  admission_.start_draining();
  if (!admission_.wait_idle(options_.shutdown_grace_ms)) {
    models_.shutdown();  // the rest end with finish_reason "abort"
    admission_.wait_idle(5000);
  }
  if (realtime_) realtime_->stop();
  http_.stop();
}

void HttpServer::guarded(httplib::Response& res, const std::function<void()>& handler) {
  try {
    handler();
  } catch (const ApiError& e) {
    set_error(res, e);
  } catch (const std::exception& e) {
    set_error(res, from_engine_error(e));
  }
}

std::string HttpServer::read_body(const httplib::ContentReader& reader) const {
  const size_t limit = options_.connections.max_body_bytes;
  std::string body;
  bool over = false;
  const bool complete = reader([&](const char* data, size_t n) {
    over = body.size() + n > limit;  // decompressed bytes: a gzip body may expand 1000x
    if (over) return false;
    body.append(data, n);
    return true;
  });
  if (over || LimitedHttpServer::body_over_limit()) throw body_too_large();
  if (!complete) {
    throw ApiError(400, "the request body is cut short or its chunked or compressed encoding is malformed", {},
                   "invalid_body");
  }
  return body;
}

void HttpServer::add_routes() {
  // Authentication and the body limit come before routing; every answer is counted.
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    t_record = std::make_shared<AccessRecord>();
    t_record->client = req.remote_addr;
    t_record->method = req.method;
    t_record->path = req.path;
    // httplib would read the body of any other method into memory, unbounded, before routing.
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST" && req.method != "DELETE") {
      set_error(res, ApiError(405, fmt::format("method {} is not served; use GET, POST or DELETE", req.method), {},
                              "method_not_allowed"));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (options_.api_key.empty() || req.path.rfind("/v1/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + options_.api_key) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    set_error(res, ApiError(401, "a valid API key is required: Authorization: Bearer KEY", {}, "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    metrics_->record_http(res.status);
    LimitedHttpServer::close_if_body_unread(req, res);
    // A streamed reply took its record (send_reply); a request httplib refused before routing
    // (a malformed request line, say) has none yet.
    if (options_.log_requests && !res.is_chunked_content_provider_) {
      if (!t_record) {
        t_record = std::make_shared<AccessRecord>();
        t_record->client = req.remote_addr;
        t_record->method = req.method;
        t_record->path = req.path;
      }
      log_request(*t_record, res.status);
    }
    t_record.reset();
  });
  // The method and path may be any bytes (e.g. %FF decodes to an invalid UTF-8 path); dump_json
  // writes them as U+FFFD.
  http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // an error object is already there
    ApiError error(res.status, fmt::format("HTTP {} for {} {}", res.status, req.method, req.path));
    if (res.status == 413 || LimitedHttpServer::body_over_limit()) {
      error = body_too_large();
    } else if (res.status == 404) {
      error = ApiError(404, fmt::format("no route {} {}", req.method, req.path), {}, "unknown_url");
    }
    set_error(res, error);
  });
  // Whatever a handler throws past guarded(): a 500 and a log line, never std::terminate.
  http_.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr thrown) {
    std::string what = "an exception of unknown type";
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    logger()->error("HTTP {} {}: {}", req.method, req.path, what);
    set_error(res, ApiError(500, "internal error: " + what, {}, "internal_error"));
  });

  // The playground page is static and needs no key; the API calls it makes do.
  http_.Get("/", [](const httplib::Request&, httplib::Response& res) {
    const std::string_view html = playground_html();
    res.set_content(html.data(), html.size(), "text/html; charset=utf-8");
  });
  http_.Get("/playground/config", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(playground_config(realtime_port(), !options_.api_key.empty()).dump(), "application/json");
  });
  http_.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/plain"); });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_->render(), "text/plain; version=0.0.4");
  });
  http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    guarded(res, [&] { res.set_content(models_json(), "application/json"); });
  });
  using Reader = httplib::ContentReader;
  http_.Post("/v1/completions", [this](const httplib::Request&, httplib::Response& res, const Reader& reader) {
    guarded(res, [&] { completions(read_body(reader), res, false); });
  });
  http_.Post("/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res, const Reader& reader) {
    guarded(res, [&] { completions(read_body(reader), res, true); });
  });
  http_.Post("/v1/audio/speech", [this](const httplib::Request&, httplib::Response& res, const Reader& reader) {
    guarded(res, [&] { speech(read_body(reader), res); });
  });
  http_.Post("/v1/audio/transcriptions",
             [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
               guarded(res, [&] { transcriptions(req, reader, res); });
             });
  http_.Post("/v1/audio/voices", [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
    guarded(res, [&] { new_voice(req, reader, res); });
  });
  http_.Get("/v1/audio/voices", [this](const httplib::Request&, httplib::Response& res) {
    guarded(res, [&] {
      nlohmann::json data = nlohmann::json::array();
      for (const auto& voice : voices_->list()) data.push_back(voice_json(*voice));
      res.set_content(dump_json({{"object", "list"}, {"data", data}}), "application/json");
    });
  });
  const auto unknown_voice = [](const std::string& id) {
    return ApiError(404, fmt::format("no voice has the id '{}'", id), "voice_id", "voice_not_found");
  };
  const char* one_voice = R"(/v1/audio/voices/([^/]+))";
  http_.Get(one_voice, [this, unknown_voice](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      const auto voice = voices_->find(req.matches[1].str());
      if (!voice) throw unknown_voice(req.matches[1].str());
      res.set_content(dump_json(voice_json(*voice)), "application/json");
    });
  });
  // DELETE routes take a content reader so that httplib does not read a body into memory.
  http_.Delete(one_voice, [this, unknown_voice](const httplib::Request& req, httplib::Response& res, const Reader&) {
    guarded(res, [&] {
      // A body left unread would be parsed as the next request; an error answer closes the connection.
      const std::string length = req.get_header_value("Content-Length");
      if (req.has_header("Transfer-Encoding") || (!length.empty() && length != "0")) {
        throw ApiError(400, "DELETE takes no request body", {}, "invalid_body");
      }
      if (!voices_->remove(req.matches[1].str())) throw unknown_voice(req.matches[1].str());
      res.set_content(dump_json({{"id", req.matches[1].str()}, {"object", "audio.voice.deleted"}, {"deleted", true}}),
                      "application/json");
    });
  });
  // Any other POST or DELETE: httplib would read its body into memory before finding no route.
  const auto no_route = [](const httplib::Request& req, httplib::Response& res, const Reader&) {
    set_error(res, ApiError(404, fmt::format("no route {} {}", req.method, req.path), {}, "unknown_url"));
  };
  http_.Post(".*", no_route);
  http_.Delete(".*", no_route);
}

void HttpServer::record_model(const nlohmann::json& request) const {
  const auto model = request.find("model");  // end() for a body that is not an object
  if (!t_record || model == request.end() || !model->is_string()) return;
  for (const auto& served : models_.all()) {
    if (served->name == *model) t_record->model = served->name;  // only served names reach the log
  }
}

std::string HttpServer::models_json() const {
  nlohmann::json data = nlohmann::json::array();
  for (const auto& model : models_.all()) {
    const ModelInfo& info = model->engine->model_info();
    nlohmann::json entry = {{"id", model->name},
                            {"object", "model"},
                            {"created", model->created},
                            {"owned_by", "izwi"},
                            {"kind", model_kind(info)}};
    entry["weight_bytes"] = info.weight_bytes;  // ModelInfo::weight_bytes: what the model holds in memory
    if (info.produces_audio) entry["voices"] = info.speakers;
    if (info.audio_chat) entry["audio_chat"] = true;  // a realtime conversation (the playground's Talk tab)
    data.push_back(std::move(entry));
  }
  return dump_json({{"object", "list"}, {"data", data}});
}

void HttpServer::completions(const std::string& body, httplib::Response& res, bool chat) {
  const nlohmann::json request = parse_body(body);
  record_model(request);
  if (chat && is_chat_audio_request(request)) return chat_audio(request, res);
  const std::shared_ptr<TextJob> job = std::make_shared<TextJob>(parse_text_request(request, models_, chat));
  const std::shared_ptr<AccessRecord> record = t_record;
  if (record) record->prompt_tokens = job->prompt_tokens();
  auto reply = std::make_shared<Reply>();
  reply->ticket = admission_.enter();
  reply->open_choices = job->request.params.n;
  attach(*reply, std::make_shared<StreamHandle>(job->model->engine->generate_streaming(job->request)));

  // Each choice (n) streams on its own; the reply ends with the last one.
  struct Choice {
    Clock::time_point last_token;
    bool first = true;
    Output output;  // gathered for a whole (unstreamed) answer
    std::string error;
  };
  struct Progress {
    Clock::time_point start = Clock::now();
    std::vector<Choice> choices;
    int32_t tokens = 0;    // of every choice
    int32_t finished = 0;  // choices
  };
  auto progress = std::make_shared<Progress>();
  progress->choices.resize(static_cast<size_t>(job->request.params.n));
  ServerMetrics* metrics = metrics_.get();
  reply->on_chunk = [job, progress, metrics, record](const StreamChunk& chunk) -> std::string {
    Progress& p = *progress;
    Choice& c = p.choices.at(static_cast<size_t>(chunk.index));
    Output& o = c.output;
    if (!chunk.tokens.empty()) {
      if (!o.tokens.empty()) metrics->record_inter_token(job->model->name, seconds_since(c.last_token));
      c.last_token = Clock::now();
    }
    o.index = chunk.index;
    o.tokens.insert(o.tokens.end(), chunk.tokens.begin(), chunk.tokens.end());
    o.text += chunk.text;
    o.logprobs.insert(o.logprobs.end(), chunk.logprobs.begin(), chunk.logprobs.end());
    o.prompt_logprobs.insert(o.prompt_logprobs.end(), chunk.prompt_logprobs.begin(), chunk.prompt_logprobs.end());
    p.tokens += static_cast<int32_t>(chunk.tokens.size());
    if (record) record->completion_tokens = p.tokens;
    if (chunk.finished) {
      o.finish_reason = chunk.finish_reason;
      if (chunk.finish_reason == FinishReason::Error) c.error = chunk.error;
      ++p.finished;
    }
    const bool done = chunk.finished && p.finished == static_cast<int32_t>(p.choices.size());
    if (done) {
      metrics->record(job->model->name, {chunk.timings.ttft_ms / 1000.0, seconds_since(p.start), chunk.finish_reason});
      if (record) record->finish = to_string(chunk.finish_reason);
    }
    if (!job->stream) {
      if (!done) return {};
      for (const Choice& choice : p.choices) {
        if (!choice.error.empty()) return dump_json(ApiError(500, choice.error, {}, "internal_error").body());
      }
      Output output = p.choices[0].output;
      if (p.choices.size() > 1) {
        for (Choice& choice : p.choices) output.choices.push_back(std::move(choice.output));
      }
      return dump_json(text_response(*job, output));
    }
    std::string out;
    if (chunk.finish_reason == FinishReason::Error) {
      out += sse(ApiError(500, chunk.error, {}, "internal_error").body());
    } else if (!chunk.text.empty() || ((job->ids_as_text || job->tools) && !chunk.tokens.empty()) ||
               !chunk.logprobs.empty() || c.first || chunk.finished) {
      out += sse(text_chunk(*job, chunk, c.first));
      c.first = false;
    }
    if (done) {
      if (job->include_usage) out += sse(usage_chunk(*job, p.tokens));
      out += "data: [DONE]\n\n";
    }
    return out;
  };
  reply->on_hangup = [job, progress, metrics] {
    metrics->record(job->model->name, {-1, seconds_since(progress->start), FinishReason::Abort});
  };
  send_reply(res, job->stream ? "text/event-stream" : "application/json", reply, options_.log_requests);
}

void HttpServer::chat_audio(const nlohmann::json& request, httplib::Response& res) {
  const auto job = std::make_shared<const ChatAudioJob>(parse_chat_audio_request(request, models_, audio_answers_));
  const std::shared_ptr<AccessRecord> record = t_record;
  auto reply = std::make_shared<Reply>();
  reply->ticket = admission_.enter();
  std::shared_ptr<StreamHandle> stream;
  try {  // the user audio is encoded here: audio too long for the context is the client's
    stream = std::make_shared<StreamHandle>(job->model->engine->audio_chat_streaming(job->request));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::InvalidArgument) throw;
    bad_param("messages", "{}", e.what());
  }
  attach(*reply, stream);
  auto answer = std::make_shared<ChatAudioAnswer>(*job, audio_answers_);
  const auto start = std::make_shared<Clock::time_point>(Clock::now());
  ServerMetrics* metrics = metrics_.get();
  reply->on_chunk = [job, answer, start, metrics, record](const StreamChunk& chunk) -> std::string {
    std::string out = answer->add(chunk);
    if (record) record->completion_tokens = answer->items();
    if (chunk.finished) {
      metrics->record(job->model->name, {chunk.timings.ttft_ms / 1000.0, seconds_since(*start), chunk.finish_reason});
      if (record) record->finish = to_string(chunk.finish_reason);
    }
    return out;
  };
  reply->on_hangup = [job, start, metrics] {
    metrics->record(job->model->name, {-1, seconds_since(*start), FinishReason::Abort});
  };
  send_reply(res, job->stream ? "text/event-stream" : "application/json", reply, options_.log_requests);
}

void HttpServer::speech(const std::string& body, httplib::Response& res) {
  const nlohmann::json request = parse_body(body);
  record_model(request);
  const std::shared_ptr<SpeechJob> job = std::make_shared<SpeechJob>(parse_speech_request(request, models_));
  if (const auto voice = voice_for_speech(string_field(request, "voice").value_or(""), *job->model, *voices_)) {
    job->request.voice = voice->voice;
  }
  const std::shared_ptr<AccessRecord> record = t_record;
  auto reply = std::make_shared<Reply>();
  reply->ticket = admission_.enter();
  attach(*reply, std::make_shared<StreamHandle>(job->model->engine->synthesize_streaming(job->request)));
  const int32_t rate = job->model->engine->model_info().output_sample_rate;
  struct Progress {
    Clock::time_point start = Clock::now();
    bool header_sent = false;
    std::vector<float> audio;
    size_t samples = 0;
  };
  auto progress = std::make_shared<Progress>();
  ServerMetrics* metrics = metrics_.get();
  reply->on_chunk = [job, progress, metrics, rate, record](const StreamChunk& chunk) -> std::string {
    Progress& p = *progress;
    p.samples += chunk.audio.size();
    if (record) record->audio_seconds = static_cast<double>(p.samples) / rate;
    if (chunk.finished) {
      metrics->record(job->model->name, {chunk.timings.ttft_ms / 1000.0, seconds_since(p.start), chunk.finish_reason,
                                         static_cast<double>(p.samples) / rate});
      if (record) record->finish = to_string(chunk.finish_reason);
    }
    if (chunk.finished && chunk.finish_reason == FinishReason::Error) {
      return job->stream == SpeechStreamFormat::Audio ? std::string()
                                                      : sse(ApiError(500, chunk.error, {}, "internal_error").body());
    }
    switch (job->stream) {
      case SpeechStreamFormat::None:
        p.audio.insert(p.audio.end(), chunk.audio.begin(), chunk.audio.end());
        return chunk.finished ? encode_audio(p.audio, rate, job->format) : std::string();
      case SpeechStreamFormat::Audio: {
        std::string out;
        if (!p.header_sent && job->format == AudioFormat::Wav) out = streaming_wav_header(rate);
        p.header_sent = true;
        return out + pcm16(chunk.audio.data(), chunk.audio.size());
      }
      case SpeechStreamFormat::Sse: {
        std::string out;
        if (!chunk.audio.empty()) {
          out = sse({{"type", "speech.audio.delta"},
                     {"audio", base64_encode(pcm16(chunk.audio.data(), chunk.audio.size()))}});
        }
        if (chunk.finished) out += sse({{"type", "speech.audio.done"}, {"usage", nullptr}});
        return out;
      }
    }
    return {};
  };
  reply->on_hangup = [job, progress, metrics] {
    metrics->record(job->model->name, {-1, seconds_since(progress->start), FinishReason::Abort});
  };
  const char* type = job->stream == SpeechStreamFormat::Sse ? "text/event-stream" : content_type(job->format);
  send_reply(res, type, reply, options_.log_requests);
}

void HttpServer::transcriptions(const httplib::Request& req, const httplib::ContentReader& reader,
                                httplib::Response& res) {
  if (!req.is_multipart_form_data()) {
    throw ApiError(400, "the body must be multipart/form-data with a 'file' part", "file", "invalid_value");
  }
  const std::shared_ptr<TranscriptionJob> job = std::make_shared<TranscriptionJob>(
      parse_transcription_request(read_form(reader, options_.connections.max_body_bytes), models_));
  const std::shared_ptr<AccessRecord> record = t_record;
  if (record) {
    record->model = job->model->name;
    record->audio_seconds = static_cast<double>(job->samples.size()) / job->sample_rate;
  }
  auto reply = std::make_shared<Reply>();
  reply->ticket = admission_.enter();
  auto stream = std::make_shared<TranscriptionStream>(job->model->engine->start_transcription(job->options));
  stream->push_audio(job->samples.data(), job->samples.size(), job->sample_rate);
  stream->finish_audio();
  // Audio the model's frontend cannot take (too short for one log-mel frame) fails the request as
  // it starts: the first chunk comes before the status line, so that is a 400 naming the file.
  std::optional<StreamChunk> first = stream->next();
  if (first && first->finish_reason == FinishReason::Error) {
    const ApiError error = from_engine_error(Error(first->error_code, first->error));
    throw ApiError(error.status(), error.what(), error.status() == 400 ? "file" : "", error.code());
  }
  attach(*reply, stream);
  reply->next = [stream, first = std::move(first)]() mutable {
    return first ? std::exchange(first, std::nullopt) : stream->next();
  };
  struct Progress {
    Clock::time_point start = Clock::now();
    std::string text;
    std::vector<int32_t> tokens;
  };
  auto progress = std::make_shared<Progress>();
  ServerMetrics* metrics = metrics_.get();
  reply->on_chunk = [job, progress, metrics, record](const StreamChunk& chunk) -> std::string {
    Progress& p = *progress;
    p.text += chunk.text;
    p.tokens.insert(p.tokens.end(), chunk.tokens.begin(), chunk.tokens.end());
    if (record) record->completion_tokens = static_cast<int32_t>(p.tokens.size());
    if (chunk.finished) {
      metrics->record(job->model->name, {chunk.timings.ttft_ms / 1000.0, seconds_since(p.start), chunk.finish_reason,
                                         static_cast<double>(job->samples.size()) / job->sample_rate});
      if (record) record->finish = to_string(chunk.finish_reason);
    }
    const bool failed = chunk.finished && chunk.finish_reason == FinishReason::Error;
    if (job->stream) {
      if (failed) return sse(ApiError(500, chunk.error, {}, "internal_error").body());
      std::string out;
      if (!chunk.text.empty()) out = sse({{"type", "transcript.text.delta"}, {"delta", chunk.text}});
      if (chunk.finished) out += sse({{"type", "transcript.text.done"}, {"text", p.text}});
      return out;
    }
    if (!chunk.finished) return {};
    if (failed) return dump_json(ApiError(500, chunk.error, {}, "internal_error").body());
    if (job->response_format == "text") return p.text;
    Output output;
    output.text = p.text;
    output.tokens = p.tokens;
    return dump_json(transcription_response(*job, output));
  };
  const char* type = job->stream                      ? "text/event-stream"
                     : job->response_format == "text" ? "text/plain; charset=utf-8"
                                                      : "application/json";
  send_reply(res, type, reply, options_.log_requests);
}

void HttpServer::new_voice(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res) {
  if (!req.is_multipart_form_data()) {
    throw ApiError(400, "the body must be multipart/form-data with a 'file' part", "file", "invalid_value");
  }
  const CreateVoiceJob job =
      parse_create_voice_request(read_form(reader, options_.connections.max_body_bytes), models_, options_.voices);
  if (t_record) {
    t_record->model = job.model->name;
    t_record->audio_seconds = static_cast<double>(job.samples.size()) / job.sample_rate;
  }
  const std::shared_ptr<void> ticket = admission_.enter();
  const auto voice = voices_->add(job.name, job.model->name, create_voice(job));
  res.set_content(dump_json(voice_json(*voice)), "application/json");
}

}  // namespace izwi::server
