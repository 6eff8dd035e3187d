#pragma once
// A realtime WebSocket connection to a speech-to-speech model (LFM2-Audio): OpenAI's Realtime API
// conversation (docs/serving.md, "Realtime conversations"). The client appends PCM16; with
// turn_detection server_vad (the default) the energy and spectral-flatness detector
// (src/audio/voice_activity_detector.h) ends a user turn after the configured silence, commits it
// and starts a response by itself; without it the client commits and asks (response.create).
// Responses stream the model's speech (response.output_audio.delta) and its text
// (…output_audio_transcript.delta, or response.output_text.delta when only text is asked for).
// Speech during a response (barge-in) cancels it; the assistant item keeps what was sent. The
// conversation so far is every later request's history, so a turn finds the ones before it in
// the engine's prefix cache (response.done's usage.input_token_details.cached_tokens).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audio/voice_activity_detector.h"
#include "izwi/audio_chat.h"
#include "izwi/stream_handle.h"
#include "server/realtime_connection.h"

namespace izwi::server {

class RealtimeConversation : public RealtimeConnection {
 public:
  /// `model` is an audio chat model. Sends session.created.
  RealtimeConversation(const ServedModel& model, ServerMetrics& metrics, Admission& admission, Send send);
  /// Aborts the response still running and waits for its reader: the engine keeps nothing of it.
  ~RealtimeConversation() override;

  void on_message(const std::string& text) override;

 private:
  struct Item {
    std::string id;
    AudioChatMessage message;
  };
  /// The server VAD's settings, as the session shows them.
  struct TurnDetection {
    VadOptions vad;
    bool create_response = true;
    bool interrupt_response = true;
  };
  /// One response: its engine request, read on a thread of its own.
  struct Response {
    std::string id;
    std::string item_id;
    std::string request_id;  ///< the engine's
    bool audio_out = true;   ///< the session's output modality when it began
    /// Submitted on the reader's thread: the engine encodes the user's audio on the calling
    /// thread, which must not be the WebSocket loop every connection shares.
    AudioChatRequest request;
    StreamHandle stream;
    std::shared_ptr<void> ticket;  ///< the admission slot
    std::thread reader;
    std::string cancel_reason;  ///< set (under mutex_) when cancelled: "turn_detected" or "client_cancelled"
    std::atomic<bool> done{false};
  };

  // Under mutex_:
  void handle(const nlohmann::json& event);
  void update_session(const nlohmann::json& session);
  void append(const nlohmann::json& event);
  void commit(int64_t begin, int64_t end, const std::string& item_id);
  void clear();
  void create_item(const nlohmann::json& event);
  void start_response();
  void cancel_response(const std::string& reason);
  void add_item(Item item);
  void restart_vad();
  nlohmann::json session_json() const;
  nlohmann::json user_item_json(const Item& item) const;
  /// Joins the readers of responses that have finished.
  void reap();

  /// On the response's thread: its chunks as events, then the assistant item and response.done.
  void read_response(Response& response);

  const ServedModel& model_;
  ServerMetrics& metrics_;
  Admission& admission_;
  const uint64_t serial_;  ///< tells this conversation's engine request ids from other sessions'

  std::mutex mutex_;
  bool closing_ = false;
  // The session.
  std::string instructions_;
  bool audio_out_ = true;  ///< output_modalities ["audio"] (with its transcript) or ["text"]
  std::string voice_;
  int32_t input_rate_ = 24000;
  int32_t max_output_items_ = 512;  ///< text tokens + audio frames per response
  std::optional<TurnDetection> turn_detection_;
  // The input audio buffer: samples since buffer_start_ (a session-wide sample count).
  std::unique_ptr<VoiceActivityDetector> vad_;
  std::vector<float> buffer_;
  int64_t buffer_start_ = 0;
  int64_t vad_origin_ = 0;     ///< the session-wide sample at which vad_ began counting
  int64_t speech_start_ = -1;  ///< where the turn the VAD is hearing began, or -1
  std::string speech_item_id_;
  // The conversation.
  std::vector<Item> items_;
  size_t answered_ = 0;  ///< items_ before this index have been given to a response
  uint64_t next_item_ = 0;
  uint64_t next_response_ = 0;
  Response* active_ = nullptr;    ///< the response running now, if any
  bool response_queued_ = false;  ///< a turn ended while a cancelled response was still finishing
  std::vector<std::unique_ptr<Response>> responses_;
};

}  // namespace izwi::server
