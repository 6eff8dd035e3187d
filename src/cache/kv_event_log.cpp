#include "cache/kv_event_log.h"

#include <utility>

namespace izwi {

void KvEventLog::set_enabled(bool on) {
  enabled_ = on;
  if (!on) events_.clear();
}

void KvEventLog::stored(std::optional<uint64_t> parent, uint64_t hash, const std::vector<int32_t>& tokens) {
  if (!enabled_) return;
  auto* last = events_.empty() ? nullptr : std::get_if<KvBlockStored>(&events_.back());
  if (last == nullptr || !parent || last->block_hashes.back() != *parent) {
    events_.emplace_back(KvBlockStored{{}, parent, {}, block_size_});
    last = &std::get<KvBlockStored>(events_.back());
  }
  last->block_hashes.push_back(hash);
  last->token_ids.insert(last->token_ids.end(), tokens.begin(), tokens.end());
}

void KvEventLog::removed(uint64_t hash) {
  if (!enabled_) return;
  auto* last = events_.empty() ? nullptr : std::get_if<KvBlockRemoved>(&events_.back());
  if (last == nullptr) {
    events_.emplace_back(KvBlockRemoved{});
    last = &std::get<KvBlockRemoved>(events_.back());
  }
  last->block_hashes.push_back(hash);
}

void KvEventLog::cleared() {
  if (!enabled_) return;
  events_.emplace_back(KvAllBlocksCleared{});
}

std::vector<KvEvent> KvEventLog::take() { return std::exchange(events_, {}); }

}  // namespace izwi
