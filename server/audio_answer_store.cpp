#include "server/audio_answer_store.h"

#include <fmt/format.h>

#include <random>

namespace izwi::server {

AudioAnswerStore::AudioAnswerStore(int32_t max_answers, int64_t ttl_seconds)
    : max_answers_(max_answers), ttl_seconds_(ttl_seconds) {}

std::string AudioAnswerStore::new_id() {
  // From the system's entropy, not a seeded generator whose state other ids would give away: an
  // id is what lets a request continue from an answer.
  static std::mutex mutex;
  static std::random_device random;
  const std::lock_guard<std::mutex> lock(mutex);
  const uint64_t high = random(), low = random();
  return fmt::format("audio_{:016x}", (high << 32) | low);
}

std::shared_ptr<const StoredAnswer> AudioAnswerStore::add(const std::string& id, const std::string& model,
                                                          AudioChatMessage message, int64_t now) {
  auto answer = std::make_shared<StoredAnswer>();
  answer->id = id;
  answer->model = model;
  answer->expires_at = now + ttl_seconds_;
  answer->message = std::move(message);
  const std::lock_guard<std::mutex> lock(mutex_);
  while (!order_.empty() &&
         (static_cast<int32_t>(order_.size()) >= max_answers_ || answers_.at(order_.front())->expires_at <= now)) {
    answers_.erase(order_.front());
    order_.pop_front();
  }
  answers_[id] = answer;
  order_.push_back(id);
  return answer;
}

std::shared_ptr<const StoredAnswer> AudioAnswerStore::find(const std::string& id, int64_t now) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = answers_.find(id);
  if (it == answers_.end() || it->second->expires_at <= now) return nullptr;
  return it->second;
}

}  // namespace izwi::server
