#include "server/realtime_session.h"

#include <fmt/format.h>

#include <optional>

#include "common/logging.h"
#include "server/json_fields.h"

namespace izwi::server {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kMinRate = 8000;
constexpr int32_t kMaxRate = 192000;
// The audio one item takes before it must be committed or cleared: a client appending faster
// than real time would otherwise grow the engine's backlog (and one step's buffers) without end.
constexpr int64_t kMaxItemSeconds = 600;
// Committed items a session may have transcribing at once, so that one client cannot take the
// whole realtime pool (Admission) or hold more than this many items' audio.
constexpr size_t kMaxItemsInFlight = 8;

}  // namespace

RealtimeSession::RealtimeSession(const ServedModels& models, ServerMetrics& metrics, Admission& admission,
                                 const std::string& model, Send send)
    : RealtimeConnection(std::move(send)), models_(models), metrics_(metrics), admission_(admission) {
  std::optional<ApiError> error;
  try {
    if (!model.empty()) {
      choose_model(model, "model");
    } else {
      for (const auto& served : models_.all()) {
        if (std::string(model_kind(served->engine->model_info())) != "transcription") continue;
        if (model_ != nullptr) {  // more than one: the client must name it
          model_ = nullptr;
          break;
        }
        model_ = served.get();
      }
    }
  } catch (const ApiError& e) {
    error = e;
  }
  send_event({{"type", "transcription_session.created"}, {"session", session_json()}});
  if (error) send_error(*error, "");
}

RealtimeSession::~RealtimeSession() {
  if (open_) closing_.push_back(std::move(open_));
  for (auto& item : closing_) {
    item->stream->abort();
    if (item->reader.joinable()) item->reader.join();
  }
}

void RealtimeSession::on_message(const std::string& text) {
  dispatch(text, [this](const nlohmann::json& event) { handle(event); });
}

void RealtimeSession::handle(const nlohmann::json& event) {
  const std::string type = required_string(event, "type");
  if (type == "transcription_session.update" || type == "session.update") {
    const nlohmann::json* session = object_field(event, "session");
    if (session == nullptr) bad_param("session", "'{}' needs a 'session' object", type);
    update_session(*session, type == "session.update");
    send_event({{"type", type == "session.update" ? "session.updated" : "transcription_session.updated"},
                {"session", session_json()}});
  } else if (type == "input_audio_buffer.append") {
    append(event);
  } else if (type == "input_audio_buffer.commit") {
    commit();
  } else if (type == "input_audio_buffer.clear") {
    clear();
  } else {
    throw ApiError(400, fmt::format("unknown or unsupported event type '{}'", type), "type", "invalid_value");
  }
}

void RealtimeSession::choose_model(const std::string& name, const std::string& param) {
  ServedModel* model = nullptr;
  try {
    model = &models_.get(name);
  } catch (const ApiError& e) {
    throw ApiError(e.status(), e.what(), param, e.code());
  }
  require_kind(*model, "transcription", "/v1/realtime", param);
  model_ = model;
}

// The beta shape {input_audio_format, input_audio_transcription: {model}} and the GA shape
// {type: "transcription", audio: {input: {format: {type, rate}, transcription: {model}}}}.
// Turn detection is left to the client (commit ends an item); other fields are ignored.
void RealtimeSession::update_session(const nlohmann::json& session, bool ga_shape) {
  const nlohmann::json* transcription = nullptr;
  if (ga_shape) {
    const nlohmann::json* audio = object_field(session, "audio");
    const nlohmann::json* input = audio != nullptr ? object_field(*audio, "input") : nullptr;
    if (input != nullptr) {
      if (const nlohmann::json* format = object_field(*input, "format")) {
        const std::string format_type = string_field(*format, "type").value_or("audio/pcm");
        if (format_type != "audio/pcm")
          bad_param("format", "only audio/pcm (PCM16) input is taken, not {}", format_type);
        sample_rate_ = static_cast<int32_t>(integer_field(*format, "rate", kMinRate, kMaxRate).value_or(sample_rate_));
      }
      transcription = object_field(*input, "transcription");
    }
  } else {
    const std::string format = string_field(session, "input_audio_format").value_or("pcm16");
    if (format != "pcm16") bad_param("input_audio_format", "only pcm16 input is taken, not {}", format);
    transcription = object_field(session, "input_audio_transcription");
  }
  if (transcription != nullptr) {
    if (std::optional<std::string> model = string_field(*transcription, "model")) choose_model(*model, "model");
  }
}

nlohmann::json RealtimeSession::session_json() const {
  return {{"object", "realtime.transcription_session"},
          {"input_audio_format", "pcm16"},
          {"input_audio_rate", sample_rate_},
          {"input_audio_transcription",
           {{"model", model_ != nullptr ? nlohmann::json(model_->name) : nlohmann::json(nullptr)}}},
          {"turn_detection", nullptr}};
}

void RealtimeSession::append(const nlohmann::json& event) {
  const std::string audio = required_string(event, "audio");
  if (audio.size() > kMaxAppendBase64) {
    bad_param("audio", "an append carries at most 15 MiB of base64 audio, not {} bytes: send it in pieces",
              audio.size());
  }
  const std::vector<float> samples = decode_pcm16(audio, "audio");
  if (model_ == nullptr) {
    bad_param("model", "no transcription model chosen: name one in the URL (?model=) or a session update");
  }
  const size_t held = open_ ? open_->samples : 0;
  if (held + samples.size() > static_cast<size_t>(kMaxItemSeconds * sample_rate_)) {
    throw ApiError(400,
                   fmt::format("the input audio buffer holds {:.1f} s and takes at most {} s: commit (or clear) it "
                               "before appending more",
                               static_cast<double>(held) / sample_rate_, kMaxItemSeconds),
                   "audio", "input_audio_buffer_full");
  }
  if (!open_) {
    reap();
    if (closing_.size() >= kMaxItemsInFlight) {
      throw ApiError(429,
                     fmt::format("{} committed items are still being transcribed, the most one session has: wait for "
                                 "their completion before appending more",
                                 closing_.size()),
                     {}, "rate_limit_exceeded");
    }
    auto item = std::make_unique<Item>();
    item->model = model_;
    item->ticket = admission_.enter(Admission::Pool::Realtime);
    item->id = fmt::format("item_{:06}", next_item_++);
    TranscriptionOptions options;
    options.continue_after_audio = true;  // the text still delayed behind the audio's end
    item->stream = std::make_shared<TranscriptionStream>(model_->engine->start_transcription(options));
    item->reader = std::thread([this, raw = item.get(), rate = sample_rate_] { read_item(*raw, rate); });
    open_ = std::move(item);
  }
  open_->stream->push_audio(samples.data(), samples.size(), sample_rate_);
  open_->samples += samples.size();
}

void RealtimeSession::commit() {
  if (!open_) {
    throw ApiError(400, "the input audio buffer is empty: append audio before committing", {},
                   "input_audio_buffer_commit_empty");
  }
  send_event(
      {{"type", "input_audio_buffer.committed"},
       {"previous_item_id", previous_item_id_.empty() ? nlohmann::json(nullptr) : nlohmann::json(previous_item_id_)},
       {"item_id", open_->id}});
  previous_item_id_ = open_->id;
  open_->stream->finish_audio();
  closing_.push_back(std::move(open_));
}

void RealtimeSession::clear() {
  if (open_) {
    open_->stream->abort();
    closing_.push_back(std::move(open_));
  }
  send_event({{"type", "input_audio_buffer.cleared"}});
}

// On the item's own thread: the engine's chunks as events, until the finished one. Nothing may
// escape the thread (that would end the process): a failure is the item's `failed` event.
void RealtimeSession::read_item(Item& item, int32_t sample_rate) {
  try {
    read_chunks(item, sample_rate);
  } catch (const std::exception& e) {
    logger()->error("realtime: item {} failed: {}", item.id, e.what());
    try {
      item.stream->abort();
      send_failed(item, ApiError(500, e.what(), {}, "internal_error"));
    } catch (...) {  // the connection is going too
    }
  }
  item.ticket.reset();
  item.done = true;
}

void RealtimeSession::read_chunks(Item& item, int32_t sample_rate) {
  const Clock::time_point start = Clock::now();
  std::string transcript;
  while (std::optional<StreamChunk> chunk = item.stream->next()) {
    if (!chunk->text.empty()) {
      transcript += chunk->text;
      send_event({{"type", "conversation.item.input_audio_transcription.delta"},
                  {"item_id", item.id},
                  {"content_index", 0},
                  {"delta", chunk->text}});
    }
    if (!chunk->finished) continue;
    metrics_.record(item.model->name,
                    {chunk->timings.ttft_ms / 1000.0, std::chrono::duration<double>(Clock::now() - start).count(),
                     chunk->finish_reason, static_cast<double>(item.samples) / sample_rate});
    if (chunk->finish_reason == FinishReason::Error) {
      send_failed(item, ApiError(500, chunk->error, {}, "internal_error"));
    } else if (chunk->finish_reason != FinishReason::Abort) {
      send_event({{"type", "conversation.item.input_audio_transcription.completed"},
                  {"item_id", item.id},
                  {"content_index", 0},
                  {"transcript", transcript}});
    }
  }
}

void RealtimeSession::send_failed(const Item& item, const ApiError& error) {
  send_event({{"type", "conversation.item.input_audio_transcription.failed"},
              {"item_id", item.id},
              {"content_index", 0},
              {"error", error.body().at("error")}});
}

void RealtimeSession::reap() {
  for (auto it = closing_.begin(); it != closing_.end();) {
    if ((*it)->done) {
      (*it)->reader.join();
      it = closing_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace izwi::server
