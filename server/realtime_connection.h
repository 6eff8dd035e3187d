#pragma once
// What one realtime WebSocket connection is to the listener (server/realtime_server.h): a
// live-transcription session (server/realtime_session.h) or, for a speech-to-speech model, a
// conversation (server/realtime_conversation.h). Independent of the socket library: the
// listener hands it each text message and gives it a function that sends one. Also the pieces
// both speak: event ids in send order, OpenAI's error event, PCM16 in base64.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/admission.h"
#include "server/api_error.h"
#include "server/served_models.h"
#include "server/server_metrics.h"

namespace izwi::server {

class RealtimeConnection {
 public:
  /// Sends one text message to the client; called from the connection's threads, must be thread-safe.
  using Send = std::function<void(const std::string&)>;

  explicit RealtimeConnection(Send send) : send_(std::move(send)) {}
  virtual ~RealtimeConnection() = default;
  RealtimeConnection(const RealtimeConnection&) = delete;
  RealtimeConnection& operator=(const RealtimeConnection&) = delete;

  /// Handles one client event; a bad one is answered with an `error` event, the session goes on.
  virtual void on_message(const std::string& text) = 0;
  /// Answers a message the socket could not hand over as text with an `error` event.
  void reject(const ApiError& error) { send_error(error, ""); }

 protected:
  /// Stamps the next event_id and sends; thread-safe.
  void send_event(nlohmann::json event);
  /// OpenAI's `error` event, naming the client event it answers when that had an event_id.
  void send_error(const ApiError& error, const std::string& client_event_id);
  /// Parses `text` and runs `handle` on it; what it throws becomes an `error` event.
  void dispatch(const std::string& text, const std::function<void(const nlohmann::json&)>& handle);

 private:
  Send send_;
  std::mutex send_mutex_;  ///< event ids stay in send order
  uint64_t next_event_ = 0;
};

/// The session of a new connection whose URL named `model` (may be empty): a conversation when
/// the model is an audio chat model, else live transcription.
std::unique_ptr<RealtimeConnection> make_realtime_connection(const ServedModels& models, ServerMetrics& metrics,
                                                             Admission& admission, const std::string& model,
                                                             RealtimeConnection::Send send);

/// OpenAI's limit on the base64 audio of one input_audio_buffer.append.
constexpr size_t kMaxAppendBase64 = 15u << 20;

/// Little-endian PCM16 in base64 as floats in [-1, 1); a 400 naming `param` when it is not
/// base64 or has an odd number of bytes.
std::vector<float> decode_pcm16(const std::string& base64, const std::string& param);
/// Floats in [-1, 1] as little-endian PCM16 in base64 (clamped, rounded).
std::string encode_pcm16(const float* samples, size_t count);

/// `body[name]` when it is an object, nullptr when absent or null; a 400 naming `param` (else
/// `name`) for another type.
const nlohmann::json* object_field(const nlohmann::json& body, const std::string& name, const std::string& param = {});

}  // namespace izwi::server
