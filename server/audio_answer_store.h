#pragma once
// The speech answers of /v1/chat/completions kept for the next turn: a later request gives an
// assistant turn back as `audio: {id}` and the answer's text ids and frames go into the history as
// they were generated, so the conversation's KV is found in the prefix cache. Bounded in time
// (each answer expires ttl seconds after it was made) and in count (the oldest goes first when
// more are held). Thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "izwi/audio_chat.h"

namespace izwi::server {

struct StoredAnswer {
  std::string id;          ///< "audio_" + 16 hex digits (message.audio.id)
  std::string model;       ///< The served model that spoke it, the only one that can continue from it.
  int64_t expires_at = 0;  ///< Unix time.
  AudioChatMessage message;
};

class AudioAnswerStore {
 public:
  AudioAnswerStore(int32_t max_answers, int64_t ttl_seconds);

  /// A fresh id for an answer that add() may store later (streamed answers name it first).
  static std::string new_id();
  /// Stores `message` under `id`, made at Unix time `now`; drops expired answers and, past
  /// max_answers, the oldest.
  std::shared_ptr<const StoredAnswer> add(const std::string& id, const std::string& model, AudioChatMessage message,
                                          int64_t now);
  /// nullptr when no answer has `id` or it expired before `now`.
  std::shared_ptr<const StoredAnswer> find(const std::string& id, int64_t now) const;

  int32_t max_answers() const { return max_answers_; }
  int64_t ttl_seconds() const { return ttl_seconds_; }

 private:
  const int32_t max_answers_;
  const int64_t ttl_seconds_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const StoredAnswer>> answers_;
  std::deque<std::string> order_;  ///< Ids oldest first (expiry follows the same order).
};

}  // namespace izwi::server
