#include "server/realtime_conversation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "common/logging.h"
#include "server/json_fields.h"

namespace izwi::server {

namespace {

constexpr int32_t kMinRate = 8000;
constexpr int32_t kMaxRate = 192000;
// The input audio buffer holds at most this much: a turn must be committed (by the VAD or the
// client) or cleared before more comes.
constexpr int64_t kMaxBufferSeconds = 600;
constexpr int64_t kMaxTurnDetectionMs = 10000;
constexpr int32_t kMaxOutputItems = 4096;
constexpr int32_t kDefaultOutputItems = 512;
constexpr const char* kDefaultInstructions = "Respond with interleaved text and audio.";

std::atomic<uint64_t> next_serial{0};

int64_t to_ms(int64_t samples, int32_t rate) { return samples * 1000 / rate; }

/// The PCM format object of the GA session shape, checked: only audio/pcm; the rate within bounds.
int32_t pcm_rate(const nlohmann::json& format, int32_t current) {
  const std::string type = string_field(format, "type").value_or("audio/pcm");
  if (type != "audio/pcm") bad_param("type", "only audio/pcm (PCM16) is taken, not {}", type);
  return static_cast<int32_t>(integer_field(format, "rate", kMinRate, kMaxRate).value_or(current));
}

/// "pcm16", the only format of the beta session shape.
void check_beta_format(const nlohmann::json& session, const std::string& name) {
  const std::optional<std::string> format = string_field(session, name);
  if (format && *format != "pcm16") bad_param(name, "only pcm16 is taken, not {}", *format);
}

}  // namespace

RealtimeConversation::RealtimeConversation(const ServedModel& model, ServerMetrics& metrics, Admission& admission,
                                           Send send)
    : RealtimeConnection(std::move(send)),
      model_(model),
      metrics_(metrics),
      admission_(admission),
      serial_(next_serial++),
      instructions_(kDefaultInstructions),
      voice_("default"),
      turn_detection_(TurnDetection{}) {
  std::lock_guard<std::mutex> lock(mutex_);
  restart_vad();
  send_event({{"type", "session.created"}, {"session", session_json()}});
}

RealtimeConversation::~RealtimeConversation() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    if (active_ != nullptr) cancel_response("client_gone");
  }
  for (auto& response : responses_) {
    if (response->reader.joinable()) response->reader.join();
  }
}

void RealtimeConversation::on_message(const std::string& text) {
  dispatch(text, [this](const nlohmann::json& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    handle(event);
  });
}

void RealtimeConversation::handle(const nlohmann::json& event) {
  const std::string type = required_string(event, "type");
  if (type == "session.update") {
    const nlohmann::json* session = object_field(event, "session");
    if (session == nullptr) bad_param("session", "'session.update' needs a 'session' object");
    update_session(*session);
    send_event({{"type", "session.updated"}, {"session", session_json()}});
  } else if (type == "input_audio_buffer.append") {
    append(event);
  } else if (type == "input_audio_buffer.commit") {
    if (buffer_.empty()) {
      throw ApiError(400, "the input audio buffer is empty: append audio before committing", {},
                     "input_audio_buffer_commit_empty");
    }
    const int64_t end = buffer_start_ + static_cast<int64_t>(buffer_.size());
    commit(speech_start_ >= 0 ? speech_start_ : buffer_start_, end,
           speech_start_ >= 0 ? speech_item_id_ : fmt::format("item_{:06}", next_item_++));
    restart_vad();  // a turn the VAD was hearing ended with the commit
  } else if (type == "input_audio_buffer.clear") {
    clear();
    send_event({{"type", "input_audio_buffer.cleared"}});
  } else if (type == "conversation.item.create") {
    create_item(event);
  } else if (type == "response.create") {
    start_response();
  } else if (type == "response.cancel") {
    if (active_ == nullptr || !active_->cancel_reason.empty()) {
      throw ApiError(400, "there is no response in progress to cancel", {}, "response_cancel_not_active");
    }
    cancel_response("client_cancelled");
  } else {
    throw ApiError(400, fmt::format("unknown or unsupported event type '{}'", type), "type", "invalid_value");
  }
}

// The GA shape {type: "realtime", output_modalities, instructions, max_output_tokens, audio:
// {input: {format, turn_detection}, output: {format, voice}}} and the beta one {modalities,
// instructions, voice, input_audio_format, output_audio_format, turn_detection,
// max_response_output_tokens}. Everything is checked before anything changes.
void RealtimeConversation::update_session(const nlohmann::json& session) {
  const std::optional<std::string> type = string_field(session, "type");
  if (type && *type != "realtime") {
    bad_param("type", "'{}' is a speech-to-speech model: its sessions are realtime conversations, not {}", model_.name,
              *type);
  }
  std::string instructions = string_field(session, "instructions").value_or(instructions_);
  bool audio_out = audio_out_;
  for (const char* name : {"output_modalities", "modalities"}) {
    if (!session.contains(name) || session[name].is_null()) continue;
    const std::vector<std::string> modalities = string_or_strings(session, name, 2);
    const bool audio = std::find(modalities.begin(), modalities.end(), "audio") != modalities.end();
    for (const std::string& m : modalities) {
      if (m != "audio" && m != "text") bad_param(name, "'{}' takes \"audio\" and \"text\", not \"{}\"", name, m);
    }
    audio_out = audio;
  }
  int32_t max_items = max_output_items_;
  for (const char* name : {"max_output_tokens", "max_response_output_tokens"}) {
    if (!session.contains(name) || session[name].is_null()) continue;
    if (session[name] == "inf") {  // as long as the default allows
      max_items = kDefaultOutputItems;
    } else {
      max_items = static_cast<int32_t>(integer_field(session, name, 1, kMaxOutputItems).value_or(max_items));
    }
  }
  int32_t rate = input_rate_;
  std::string voice = voice_;
  std::optional<TurnDetection> turn_detection = turn_detection_;
  const nlohmann::json* detection = nullptr;
  bool detection_given = false;
  if (const nlohmann::json* audio = object_field(session, "audio")) {
    if (const nlohmann::json* input = object_field(*audio, "input")) {
      if (const nlohmann::json* format = object_field(*input, "format")) rate = pcm_rate(*format, rate);
      detection_given = input->contains("turn_detection");
      detection = object_field(*input, "turn_detection");
    }
    if (const nlohmann::json* output = object_field(*audio, "output")) {
      if (const nlohmann::json* format = object_field(*output, "format")) {
        const int32_t out_rate = model_.engine->model_info().output_sample_rate;
        if (pcm_rate(*format, out_rate) != out_rate) {
          bad_param("rate", "'{}' speaks PCM at {} Hz only", model_.name, out_rate);
        }
      }
      voice = string_field(*output, "voice").value_or(voice);
    }
  } else {
    check_beta_format(session, "input_audio_format");
    check_beta_format(session, "output_audio_format");
    voice = string_field(session, "voice").value_or(voice);
    detection_given = session.contains("turn_detection");
    detection = object_field(session, "turn_detection");
  }
  if (detection_given) {
    if (detection == nullptr) {
      turn_detection.reset();
    } else {
      const std::string kind = string_field(*detection, "type").value_or("server_vad");
      if (kind != "server_vad") bad_param("type", "turn_detection takes server_vad (or null), not {}", kind);
      TurnDetection next = turn_detection.value_or(TurnDetection{});
      next.vad.threshold =
          static_cast<float>(number_field(*detection, "threshold", 0.0, 1.0).value_or(next.vad.threshold));
      next.vad.prefix_padding_ms = static_cast<int32_t>(
          integer_field(*detection, "prefix_padding_ms", 0, kMaxTurnDetectionMs).value_or(next.vad.prefix_padding_ms));
      next.vad.silence_duration_ms =
          static_cast<int32_t>(integer_field(*detection, "silence_duration_ms", 0, kMaxTurnDetectionMs)
                                   .value_or(next.vad.silence_duration_ms));
      next.create_response = bool_field(*detection, "create_response").value_or(next.create_response);
      next.interrupt_response = bool_field(*detection, "interrupt_response").value_or(next.interrupt_response);
      turn_detection = next;
    }
  }
  instructions_ = std::move(instructions);
  audio_out_ = audio_out;
  max_output_items_ = max_items;
  voice_ = std::move(voice);
  if (rate != input_rate_) clear();  // buffered samples at the old rate would not mix
  input_rate_ = rate;
  turn_detection_ = turn_detection;
  restart_vad();
}

void RealtimeConversation::restart_vad() {
  vad_.reset();
  speech_start_ = -1;
  if (turn_detection_) {
    vad_ = std::make_unique<VoiceActivityDetector>(turn_detection_->vad, input_rate_);
    vad_origin_ = buffer_start_ + static_cast<int64_t>(buffer_.size());
  }
}

nlohmann::json RealtimeConversation::session_json() const {
  nlohmann::json detection = nullptr;
  if (turn_detection_) {
    detection = {{"type", "server_vad"},
                 {"threshold", turn_detection_->vad.threshold},
                 {"prefix_padding_ms", turn_detection_->vad.prefix_padding_ms},
                 {"silence_duration_ms", turn_detection_->vad.silence_duration_ms},
                 {"create_response", turn_detection_->create_response},
                 {"interrupt_response", turn_detection_->interrupt_response}};
  }
  const int32_t out_rate = model_.engine->model_info().output_sample_rate;
  return {{"type", "realtime"},
          {"object", "realtime.session"},
          {"id", fmt::format("sess_{:06}", serial_)},
          {"model", model_.name},
          {"output_modalities", audio_out_ ? nlohmann::json::array({"audio"}) : nlohmann::json::array({"text"})},
          {"instructions", instructions_},
          {"max_output_tokens", max_output_items_},
          {"audio",
           {{"input", {{"format", {{"type", "audio/pcm"}, {"rate", input_rate_}}}, {"turn_detection", detection}}},
            {"output",
             {{"format", {{"type", "audio/pcm"}, {"rate", out_rate > 0 ? nlohmann::json(out_rate) : nullptr}}},
              {"voice", voice_}}}}}};
}

void RealtimeConversation::append(const nlohmann::json& event) {
  const std::string audio = required_string(event, "audio");
  if (audio.size() > kMaxAppendBase64) {
    bad_param("audio", "an append carries at most 15 MiB of base64 audio, not {} bytes: send it in pieces",
              audio.size());
  }
  const std::vector<float> samples = decode_pcm16(audio, "audio");
  if (static_cast<int64_t>(buffer_.size() + samples.size()) > kMaxBufferSeconds * input_rate_) {
    throw ApiError(400,
                   fmt::format("the input audio buffer holds {:.1f} s and takes at most {} s: commit (or clear) it "
                               "before appending more",
                               static_cast<double>(buffer_.size()) / input_rate_, kMaxBufferSeconds),
                   "audio", "input_audio_buffer_full");
  }
  buffer_.insert(buffer_.end(), samples.begin(), samples.end());
  if (!vad_) return;
  for (const VadEvent& e : vad_->push(samples.data(), samples.size())) {
    const int64_t at = vad_origin_ + e.sample;
    if (e.kind == VadEvent::Kind::SpeechStarted) {
      speech_start_ = std::max(at, buffer_start_);
      speech_item_id_ = fmt::format("item_{:06}", next_item_++);
      send_event({{"type", "input_audio_buffer.speech_started"},
                  {"audio_start_ms", to_ms(speech_start_, input_rate_)},
                  {"item_id", speech_item_id_}});
      if (active_ != nullptr && active_->cancel_reason.empty() && turn_detection_->interrupt_response) {
        cancel_response("turn_detected");  // barge-in
      }
      continue;
    }
    send_event({{"type", "input_audio_buffer.speech_stopped"},
                {"audio_end_ms", to_ms(at, input_rate_)},
                {"item_id", speech_item_id_}});
    commit(speech_start_, at, speech_item_id_);
    speech_start_ = -1;
    if (!turn_detection_->create_response) continue;
    if (active_ != nullptr) {
      response_queued_ = true;  // the cancelled response is still finishing: this one follows it
      continue;
    }
    try {
      start_response();
    } catch (const ApiError& error) {
      send_error(error, "");
    } catch (const std::exception& error) {
      send_error(from_engine_error(error), "");
    }
  }
  // Between turns only the padding a next start may reach back to is kept.
  if (speech_start_ < 0) {
    const auto keep =
        static_cast<size_t>((turn_detection_->vad.prefix_padding_ms +
                             VoiceActivityDetector::kFrameMs * (VoiceActivityDetector::kStartFrames + 1)) *
                            static_cast<int64_t>(input_rate_) / 1000);
    if (buffer_.size() > keep) {
      const size_t drop = buffer_.size() - keep;
      buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(drop));
      buffer_start_ += static_cast<int64_t>(drop);
    }
  }
}

void RealtimeConversation::commit(int64_t begin, int64_t end, const std::string& item_id) {
  begin = std::max(begin, buffer_start_);
  end = std::min(end, buffer_start_ + static_cast<int64_t>(buffer_.size()));
  Item item{item_id, {"user", {AudioChatPart{}}}};
  AudioChatPart& part = item.message.parts[0];
  if (end > begin)
    part.audio.assign(buffer_.begin() + (begin - buffer_start_), buffer_.begin() + (end - buffer_start_));
  part.sample_rate = input_rate_;
  const int64_t drop = std::max<int64_t>(0, end - buffer_start_);
  buffer_.erase(buffer_.begin(), buffer_.begin() + drop);
  buffer_start_ += drop;
  send_event({{"type", "input_audio_buffer.committed"},
              {"previous_item_id", items_.empty() ? nlohmann::json(nullptr) : nlohmann::json(items_.back().id)},
              {"item_id", item_id}});
  add_item(std::move(item));
}

void RealtimeConversation::clear() {
  buffer_start_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
  restart_vad();
}

void RealtimeConversation::create_item(const nlohmann::json& event) {
  const nlohmann::json* item = object_field(event, "item");
  if (item == nullptr) bad_param("item", "'conversation.item.create' needs an 'item' object");
  const std::string type = string_field(*item, "type").value_or("message");
  if (type != "message") bad_param("item.type", "only message items are taken, not {}", type);
  const std::string role = required_string(*item, "role");
  if (role != "user" && role != "system" && role != "assistant") {
    bad_param("item.role", "'role' is user, system or assistant, not {}", role);
  }
  const auto content = item->find("content");
  if (content == item->end() || !content->is_array() || content->empty()) {
    bad_param("item.content", "'content' must be a non-empty array of parts");
  }
  Item added{string_field(*item, "id").value_or(fmt::format("item_{:06}", next_item_++)), {role, {}}};
  for (size_t i = 0; i < content->size(); ++i) {
    const nlohmann::json& part = (*content)[i];
    const std::string where = fmt::format("item.content[{}]", i);
    if (!part.is_object()) bad_param(where, "'{}' must be an object", where);
    const std::string part_type = string_field(part, "type").value_or("");
    AudioChatPart piece;
    if (part_type == "input_text" || part_type == "text" || part_type == "output_text") {
      const auto text = part.find("text");
      if (text == part.end() || !text->is_string()) bad_param(where + ".text", "'{}.text' must be a string", where);
      piece.text = text->get<std::string>();
    } else if (part_type == "input_audio" && role == "user") {
      const auto audio = part.find("audio");
      if (audio == part.end() || !audio->is_string()) {
        bad_param(where + ".audio", "'{}.audio' must be base64 PCM16", where);
      }
      piece.audio = decode_pcm16(audio->get<std::string>(), where + ".audio");
      if (piece.audio.empty()) bad_param(where + ".audio", "'{}.audio' holds no samples", where);
      piece.sample_rate = input_rate_;
    } else {
      bad_param(where + ".type", "a {} item takes {} parts, not '{}'", role,
                role == "user" ? "input_text and input_audio" : "text", part_type);
    }
    added.message.parts.push_back(std::move(piece));
  }
  add_item(std::move(added));
}

void RealtimeConversation::add_item(Item item) {
  nlohmann::json previous = items_.empty() ? nlohmann::json(nullptr) : nlohmann::json(items_.back().id);
  items_.push_back(std::move(item));
  send_event(
      {{"type", "conversation.item.created"}, {"previous_item_id", previous}, {"item", user_item_json(items_.back())}});
}

nlohmann::json RealtimeConversation::user_item_json(const Item& item) const {
  nlohmann::json content = nlohmann::json::array();
  for (const AudioChatPart& part : item.message.parts) {
    if (!part.audio.empty()) {
      content.push_back({{"type", "input_audio"}, {"transcript", nullptr}});
    } else {
      content.push_back(
          {{"type", item.message.role == "assistant" ? "output_text" : "input_text"}, {"text", part.text}});
    }
  }
  return {{"id", item.id},         {"object", "realtime.item"}, {"type", "message"}, {"role", item.message.role},
          {"status", "completed"}, {"content", content}};
}

void RealtimeConversation::start_response() {
  if (active_ != nullptr) {
    throw ApiError(400, "a response is in progress: cancel it (response.cancel) or wait for its response.done", {},
                   "conversation_already_has_active_response");
  }
  if (items_.size() == answered_ || items_.back().message.role != "user") {
    throw ApiError(400,
                   "there is no user turn to respond to: commit the input audio buffer or create a user item first", {},
                   "invalid_value");
  }
  reap();
  AudioChatRequest request;
  request.id = fmt::format("realtime-{}-{}", serial_, next_response_);
  request.system = instructions_;
  for (size_t i = 0; i + 1 < items_.size(); ++i) request.history.push_back(items_[i].message);
  for (const AudioChatPart& part : items_.back().message.parts) {
    if (!part.audio.empty()) {
      request.audio.insert(request.audio.end(), part.audio.begin(), part.audio.end());
      request.sample_rate = part.sample_rate;
    }
    request.text += part.text;
  }
  request.mode = AudioChatMode::Interleaved;
  request.max_items = max_output_items_;
  auto response = std::make_unique<Response>();
  response->ticket = admission_.enter(Admission::Pool::Realtime);
  response->id = fmt::format("resp_{:06}", next_response_++);
  response->item_id = fmt::format("item_{:06}", next_item_++);
  response->request_id = request.id;
  response->audio_out = audio_out_;
  response->request = std::move(request);
  const nlohmann::json modalities = audio_out_ ? nlohmann::json::array({"audio"}) : nlohmann::json::array({"text"});
  send_event({{"type", "response.created"},
              {"response",
               {{"id", response->id},
                {"object", "realtime.response"},
                {"status", "in_progress"},
                {"status_details", nullptr},
                {"output", nlohmann::json::array()},
                {"output_modalities", modalities},
                {"usage", nullptr}}}});
  const nlohmann::json item = {{"id", response->item_id}, {"object", "realtime.item"},
                               {"type", "message"},       {"role", "assistant"},
                               {"status", "in_progress"}, {"content", nlohmann::json::array()}};
  send_event(
      {{"type", "response.output_item.added"}, {"response_id", response->id}, {"output_index", 0}, {"item", item}});
  // The assistant's place in the conversation is taken now: turns committed while it speaks follow it.
  items_.push_back({response->item_id, {"assistant", {}}});
  answered_ = items_.size();
  send_event(
      {{"type", "conversation.item.created"}, {"previous_item_id", items_[items_.size() - 2].id}, {"item", item}});
  nlohmann::json part = audio_out_ ? nlohmann::json{{"type", "output_audio"}, {"transcript", ""}}
                                   : nlohmann::json{{"type", "output_text"}, {"text", ""}};
  send_event({{"type", "response.content_part.added"},
              {"response_id", response->id},
              {"item_id", response->item_id},
              {"output_index", 0},
              {"content_index", 0},
              {"part", part}});
  active_ = response.get();
  Response* raw = response.get();
  responses_.push_back(std::move(response));
  raw->reader = std::thread([this, raw] { read_response(*raw); });
}

void RealtimeConversation::cancel_response(const std::string& reason) {
  active_->cancel_reason = reason;
  model_.engine->abort(active_->request_id);
}

void RealtimeConversation::reap() {
  for (auto it = responses_.begin(); it != responses_.end();) {
    if ((*it)->done && (*it)->reader.get_id() != std::this_thread::get_id()) {
      if ((*it)->reader.joinable()) (*it)->reader.join();
      it = responses_.erase(it);
    } else {
      ++it;
    }
  }
}

// On the response's own thread. Nothing may escape it (that would end the process): a failure
// is the response's `failed` status.
void RealtimeConversation::read_response(Response& r) {
  Output answer;
  FinishReason finish = FinishReason::Error;
  std::string error;
  int64_t samples_sent = 0;
  const std::string delta_type = r.audio_out ? "response.output_audio_transcript.delta" : "response.output_text.delta";
  const auto start = std::chrono::steady_clock::now();
  try {
    r.stream = model_.engine->audio_chat_streaming(r.request);
    r.request = AudioChatRequest{};  // its audio is the engine's now
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!r.cancel_reason.empty()) model_.engine->abort(r.request_id);  // cancelled before it was submitted
    }
    while (std::optional<StreamChunk> chunk = r.stream.next()) {
      answer.tokens.insert(answer.tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
      answer.item_is_frame.insert(answer.item_is_frame.end(), chunk->item_is_frame.begin(), chunk->item_is_frame.end());
      answer.audio_codes.insert(answer.audio_codes.end(), chunk->audio_codes.begin(), chunk->audio_codes.end());
      if (r.audio_out && !chunk->audio.empty()) {
        send_event({{"type", "response.output_audio.delta"},
                    {"response_id", r.id},
                    {"item_id", r.item_id},
                    {"output_index", 0},
                    {"content_index", 0},
                    {"delta", encode_pcm16(chunk->audio.data(), chunk->audio.size())}});
        samples_sent += static_cast<int64_t>(chunk->audio.size());
      }
      if (!chunk->text.empty()) {
        answer.text += chunk->text;
        send_event({{"type", delta_type},
                    {"response_id", r.id},
                    {"item_id", r.item_id},
                    {"output_index", 0},
                    {"content_index", 0},
                    {"delta", chunk->text}});
      }
      if (chunk->finished) {
        finish = chunk->finish_reason;
        error = chunk->error;
        answer.prefix_cache_hit_tokens = chunk->prefix_cache_hit_tokens;
        answer.timings = chunk->timings;
      }
    }
  } catch (const std::exception& e) {
    logger()->error("realtime: response {} failed: {}", r.id, e.what());
    r.stream.abort();
    finish = FinishReason::Error;
    error = e.what();
  }
  try {
    metrics_.record(model_.name,
                    {answer.tokens.empty() ? -1.0 : answer.timings.ttft_ms / 1000.0,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                     finish,  // audio made (sent), for the real-time factor
                     static_cast<double>(samples_sent) / std::max(1, model_.engine->model_info().output_sample_rate)});
  } catch (const std::exception& e) {
    logger()->error("realtime: recording response {} failed: {}", r.id, e.what());
  }
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    // The assistant item keeps what was generated and sent, all of it or up to the cancel.
    const auto slot = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.id == r.item_id; });
    if (slot != items_.end()) {
      slot->message = assistant_message(answer);
      if (slot->message.parts.empty()) {  // nothing was said: no turn to remember
        if (static_cast<size_t>(slot - items_.begin()) < answered_) --answered_;
        items_.erase(slot);
      }
    }
    const bool cancelled = finish == FinishReason::Abort;
    const std::string status = cancelled                        ? "cancelled"
                               : finish == FinishReason::Error  ? "failed"
                               : finish == FinishReason::Length ? "incomplete"
                                                                : "completed";
    nlohmann::json details = nullptr;
    if (cancelled) {
      details = {{"type", "cancelled"}, {"reason", r.cancel_reason.empty() ? "client_cancelled" : r.cancel_reason}};
    } else if (finish == FinishReason::Error) {
      details = {{"type", "failed"}, {"error", {{"type", "server_error"}, {"message", error}}}};
    } else if (finish == FinishReason::Length) {
      details = {{"type", "incomplete"}, {"reason", "max_output_tokens"}};
    }
    const nlohmann::json part = r.audio_out ? nlohmann::json{{"type", "output_audio"}, {"transcript", answer.text}}
                                            : nlohmann::json{{"type", "output_text"}, {"text", answer.text}};
    const nlohmann::json item = {{"id", r.item_id},
                                 {"object", "realtime.item"},
                                 {"type", "message"},
                                 {"role", "assistant"},
                                 {"status", status == "completed" ? "completed" : "incomplete"},
                                 {"content", nlohmann::json::array({part})}};
    const nlohmann::json where = {{"response_id", r.id}, {"item_id", r.item_id}, {"output_index", 0}};
    auto with = [&](nlohmann::json event) {
      event.update(where);
      return event;
    };
    if (r.audio_out) {
      send_event(with({{"type", "response.output_audio.done"}, {"content_index", 0}}));
      send_event(
          with({{"type", "response.output_audio_transcript.done"}, {"content_index", 0}, {"transcript", answer.text}}));
    } else {
      send_event(with({{"type", "response.output_text.done"}, {"content_index", 0}, {"text", answer.text}}));
    }
    send_event(with({{"type", "response.content_part.done"}, {"content_index", 0}, {"part", part}}));
    send_event(with({{"type", "response.output_item.done"}, {"item", item}}));
    if (cancelled && r.audio_out) {
      send_event({{"type", "conversation.item.truncated"},
                  {"item_id", r.item_id},
                  {"content_index", 0},
                  {"audio_end_ms", samples_sent * 1000 / std::max(1, model_.engine->model_info().output_sample_rate)}});
    }
    int64_t frames = 0;
    for (const bool is_frame : answer.item_is_frame) frames += is_frame ? 1 : 0;
    const auto items = static_cast<int64_t>(answer.tokens.size());
    send_event(
        {{"type", "response.done"},
         {"response",
          {{"id", r.id},
           {"object", "realtime.response"},
           {"status", status},
           {"status_details", details},
           {"output", nlohmann::json::array({item})},
           {"output_modalities", r.audio_out ? nlohmann::json::array({"audio"}) : nlohmann::json::array({"text"})},
           {"usage",
            {{"output_tokens", items},
             {"total_tokens", items},
             {"input_token_details", {{"cached_tokens", answer.prefix_cache_hit_tokens}}},
             {"output_token_details", {{"text_tokens", items - frames}, {"audio_tokens", frames}}}}}}}});
    r.ticket.reset();
    r.done = true;
    if (active_ == &r) active_ = nullptr;
    if (response_queued_ && !closing_) {
      response_queued_ = false;
      try {
        start_response();
      } catch (const ApiError& e) {
        send_error(e, "");
      } catch (const std::exception& e) {
        send_error(from_engine_error(e), "");
      }
    }
  } catch (const std::exception& e) {  // the connection is going too
    logger()->error("realtime: finishing response {} failed: {}", r.id, e.what());
    r.done = true;
  }
}

}  // namespace izwi::server
