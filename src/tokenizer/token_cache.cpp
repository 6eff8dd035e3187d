#include "tokenizer/token_cache.h"

#include <functional>

namespace izwi {

TokenCache::Shard& TokenCache::shard(std::string_view piece) const {
  // High bits pick the shard: the maps inside use the low bits for their buckets.
  return shards_[(std::hash<std::string_view>{}(piece) >> 48) % kShards];
}

bool TokenCache::lookup(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.size() > kMaxPieceBytes) return false;
  Shard& s = shard(piece);
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.entries.find(std::string(piece));
  if (it == s.entries.end()) return false;
  out.insert(out.end(), it->second.begin(), it->second.end());
  return true;
}

void TokenCache::insert(std::string_view piece, const int32_t* ids, size_t count) const {
  if (piece.size() > kMaxPieceBytes) return;
  Shard& s = shard(piece);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.entries.size() >= kMaxEntriesPerShard) s.entries.clear();
  s.entries.emplace(std::string(piece), std::vector<int32_t>(ids, ids + count));
}

}  // namespace izwi
