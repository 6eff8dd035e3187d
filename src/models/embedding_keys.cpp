#include "models/embedding_keys.h"

#include <limits>

#include "common/check.h"

namespace izwi {

int32_t EmbeddingKeys::next_key() {
  const int64_t key = first_key_ + used_;
  if (key > std::numeric_limits<int32_t>::max()) {
    fail(ErrorCode::ResourceExhausted,
         "{} distinct embedding inputs used on one model: no prefix key is left for another", used_);
  }
  ++used_;
  return static_cast<int32_t>(key);
}

int32_t EmbeddingKeys::key_of(const std::vector<float>& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = vector_keys_.find(values);
  if (it != vector_keys_.end()) return it->second;
  const int32_t key = next_key();
  vector_keys_.emplace(values, key);
  return key;
}

int32_t EmbeddingKeys::key_of_frame(const std::vector<int32_t>& codes, int32_t text) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = frame_keys_.find({codes, text});
  if (it != frame_keys_.end()) return it->second;
  const int32_t key = next_key();
  frame_keys_.emplace(std::make_pair(codes, text), key);
  return key;
}

}  // namespace izwi
