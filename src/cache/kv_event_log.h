#pragma once
// The KV events of the prefix tree since they were last taken (once per engine step), recorded
// only while someone listens. Consecutive stores along one chain share one BlockStored and
// consecutive evictions one BlockRemoved, as vLLM batches them; order is otherwise kept.

#include <cstdint>
#include <optional>
#include <vector>

#include "izwi/kv_events.h"

namespace izwi {

class KvEventLog {
 public:
  explicit KvEventLog(int32_t block_size) : block_size_(block_size) {}

  bool enabled() const { return enabled_; }
  /// Turning recording off drops what was not taken.
  void set_enabled(bool on);

  /// A block (`tokens`, block_size keys) entered the tree under `parent` (empty at the root).
  void stored(std::optional<uint64_t> parent, uint64_t hash, const std::vector<int32_t>& tokens);
  void removed(uint64_t hash);
  void cleared();
  /// The events since the last take, oldest first.
  std::vector<KvEvent> take();

 private:
  int32_t block_size_;
  bool enabled_ = false;
  std::vector<KvEvent> events_;
};

}  // namespace izwi
