#include "cache/state_cache.h"

namespace izwi {

StateCache::StateCache(int32_t num_slots) : num_slots_(num_slots) {
  for (int32_t s = num_slots - 1; s >= 0; --s) free_.push_back(s);
}

int32_t StateCache::acquire(uint64_t seq) {
  auto it = owner_.find(seq);
  if (it != owner_.end()) return it->second;
  if (free_.empty()) return -1;
  const int32_t slot = free_.back();
  free_.pop_back();
  owner_.emplace(seq, slot);
  return slot;
}

int32_t StateCache::slot(uint64_t seq) const {
  auto it = owner_.find(seq);
  return it == owner_.end() ? -1 : it->second;
}

void StateCache::release(uint64_t seq) {
  auto it = owner_.find(seq);
  if (it == owner_.end()) return;
  free_.push_back(it->second);
  owner_.erase(it);
}

}  // namespace izwi
