#pragma once
// One live-transcription WebSocket connection, speaking OpenAI's realtime transcription events
// (docs/serving.md): the client appends base64 PCM16 with input_audio_buffer.append, each append
// goes straight into a live engine transcription, its text comes back as
// conversation.item.input_audio_transcription.delta while the audio still arrives, and
// input_audio_buffer.commit ends the item (…transcription.completed). Independent of the socket
// library: the server hands it each text message and gives it a function that sends one.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "izwi/transcription.h"
#include "server/realtime_connection.h"

namespace izwi::server {

class RealtimeSession : public RealtimeConnection {
 public:
  /// `model` is the URL's ?model= (may be empty: then the only served transcription model, or
  /// the one a session update names). Sends transcription_session.created.
  RealtimeSession(const ServedModels& models, ServerMetrics& metrics, Admission& admission, const std::string& model,
                  Send send);
  /// Aborts the items still transcribing and waits for their readers.
  ~RealtimeSession() override;

  void on_message(const std::string& text) override;

 private:
  struct Item {
    std::string id;
    ServedModel* model = nullptr;
    std::shared_ptr<TranscriptionStream> stream;
    std::shared_ptr<void> ticket;   ///< the admission slot
    std::thread reader;             ///< sends the deltas and the completion
    size_t samples = 0;             ///< at the client's rate
    std::atomic<bool> done{false};  ///< the reader has sent its last event
  };

  void handle(const nlohmann::json& event);
  void update_session(const nlohmann::json& session, bool ga_shape);
  void append(const nlohmann::json& event);
  void commit();
  void clear();
  void read_item(Item& item, int32_t sample_rate);
  void read_chunks(Item& item, int32_t sample_rate);
  void send_failed(const Item& item, const ApiError& error);
  /// Joins the readers of items that have finished.
  void reap();
  nlohmann::json session_json() const;
  void choose_model(const std::string& name, const std::string& param);

  const ServedModels& models_;
  ServerMetrics& metrics_;
  Admission& admission_;

  ServedModel* model_ = nullptr;
  int32_t sample_rate_ = 24000;  ///< OpenAI's pcm16 rate; the GA session shape may set another
  uint64_t next_item_ = 0;
  std::string previous_item_id_;
  std::unique_ptr<Item> open_;                  ///< receiving audio
  std::vector<std::unique_ptr<Item>> closing_;  ///< committed or cleared, readers still running
};

}  // namespace izwi::server
