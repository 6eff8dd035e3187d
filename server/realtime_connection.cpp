#include "server/realtime_connection.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/base64.h"
#include "server/json_fields.h"
#include "server/realtime_conversation.h"
#include "server/realtime_session.h"

namespace izwi::server {

void RealtimeConnection::send_event(nlohmann::json event) {
  std::lock_guard<std::mutex> lock(send_mutex_);
  event["event_id"] = fmt::format("event_{:06}", next_event_++);
  // A client's bytes (a model name it asked for, say) need not be UTF-8: those become U+FFFD.
  send_(event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void RealtimeConnection::send_error(const ApiError& error, const std::string& client_event_id) {
  nlohmann::json body = error.body().at("error");
  body["event_id"] = client_event_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(client_event_id);
  send_event({{"type", "error"}, {"error", body}});
}

void RealtimeConnection::dispatch(const std::string& text, const std::function<void(const nlohmann::json&)>& handle) {
  std::string event_id;
  try {
    const nlohmann::json event = parse_body(text);
    event_id = string_field(event, "event_id").value_or("");
    handle(event);
  } catch (const ApiError& e) {
    send_error(e, event_id);
  } catch (const std::exception& e) {
    send_error(from_engine_error(e), event_id);
  }
}

std::unique_ptr<RealtimeConnection> make_realtime_connection(const ServedModels& models, ServerMetrics& metrics,
                                                             Admission& admission, const std::string& model,
                                                             RealtimeConnection::Send send) {
  const ServedModel* served = nullptr;
  try {
    if (!model.empty()) served = &models.get(model);
  } catch (const ApiError&) {  // the transcription session names the unknown model in its error event
  }
  if (served != nullptr && served->engine->model_info().audio_chat) {
    return std::make_unique<RealtimeConversation>(*served, metrics, admission, std::move(send));
  }
  return std::make_unique<RealtimeSession>(models, metrics, admission, model, std::move(send));
}

std::vector<float> decode_pcm16(const std::string& base64, const std::string& param) {
  const std::optional<std::string> bytes = base64_decode(base64);
  if (!bytes) bad_param(param, "'{}' is not valid base64", param);
  if (bytes->size() % 2 != 0) {
    bad_param(param, "'{}' has {} bytes; PCM16 has two per sample", param, bytes->size());
  }
  std::vector<float> samples(bytes->size() / 2);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto lo = static_cast<uint8_t>((*bytes)[2 * i]);
    const auto hi = static_cast<uint8_t>((*bytes)[2 * i + 1]);
    samples[i] = static_cast<float>(static_cast<int16_t>(static_cast<uint16_t>(lo | (hi << 8)))) / 32768.0f;
  }
  return samples;
}

std::string encode_pcm16(const float* samples, size_t count) {
  std::string bytes(2 * count, '\0');
  for (size_t i = 0; i < count; ++i) {
    const float s = std::isfinite(samples[i]) ? std::clamp(samples[i], -1.0f, 32767.0f / 32768.0f) : 0.0f;
    const auto q = static_cast<int16_t>(std::lround(s * 32768.0f));
    bytes[2 * i] = static_cast<char>(q & 0xff);
    bytes[2 * i + 1] = static_cast<char>((q >> 8) & 0xff);
  }
  return base64_encode(bytes);
}

const nlohmann::json* object_field(const nlohmann::json& body, const std::string& name, const std::string& param) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  const std::string& named = param.empty() ? name : param;
  if (!it->is_object()) bad_param(named, "'{}' must be an object", named);
  return &*it;
}

}  // namespace izwi::server
