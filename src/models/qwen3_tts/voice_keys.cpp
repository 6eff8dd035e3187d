#include "models/qwen3_tts/voice_keys.h"

#include <limits>

#include "common/check.h"

namespace izwi {

int32_t VoiceKeys::key_of(const std::vector<float>& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = keys_.find(values);
  if (it != keys_.end()) return it->second;
  const int64_t key = first_key_ + static_cast<int64_t>(keys_.size());
  if (key > std::numeric_limits<int32_t>::max()) {
    fail(ErrorCode::ResourceExhausted, "{} distinct voices used on one model: no prefix key is left for another",
         keys_.size());
  }
  keys_.emplace(values, static_cast<int32_t>(key));
  return static_cast<int32_t>(key);
}

}  // namespace izwi
