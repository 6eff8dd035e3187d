#pragma once
// Bounded, thread-safe cache of pre-token -> ids. Natural text repeats a small set of words, so
// most pre-tokens skip the merge loop. Sharded by hash so threads encoding at once rarely meet on
// one lock; a full shard is cleared (cheap, and the frequent words come straight back).

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace izwi {

class TokenCache {
 public:
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxEntriesPerShard = 4096;
  static constexpr size_t kMaxPieceBytes = 64;  ///< longer pieces are rare and not worth keeping

  /// Appends the cached ids of `piece` to `out` and returns true, or returns false.
  bool lookup(std::string_view piece, std::vector<int32_t>& out) const;
  void insert(std::string_view piece, const int32_t* ids, size_t count) const;

 private:
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>> entries;
  };
  Shard& shard(std::string_view piece) const;

  mutable std::array<Shard, kShards> shards_;
};

}  // namespace izwi
