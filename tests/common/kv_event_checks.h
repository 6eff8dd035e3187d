#pragma once
// KV events checked from the outside: the block hash as docs/architecture.md defines it, written
// out again here (not the engine's code), and a subscriber's view of the prefix cache rebuilt by
// replaying events.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "izwi/kv_events.h"

namespace izwi::testing {

/// The documented hash of the block holding tokens[begin, begin + n) under `parent` (empty at the root).
uint64_t documented_block_hash(std::optional<uint64_t> parent, const std::vector<int32_t>& tokens, size_t begin,
                               size_t n);
/// Hashes of the first `num_blocks` full blocks of `tokens`, chained from the root.
std::vector<uint64_t> chain_hashes(const std::vector<int32_t>& tokens, int32_t block_size, int32_t num_blocks);

/// The set of cached block hashes a subscriber keeps. apply() returns "" or what is inconsistent:
/// a hash that is not the documented hash of its tokens and parent, a parent not held, a hash
/// stored while held or removed while not held, token_ids not block_size per hash.
class KvEventReplay {
 public:
  std::string apply(const KvEvent& event);
  std::string apply(const std::vector<KvEvent>& events);
  std::vector<uint64_t> hashes() const { return {held_.begin(), held_.end()}; }

 private:
  std::set<uint64_t> held_;
};

}  // namespace izwi::testing
