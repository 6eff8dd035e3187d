#pragma once
// Slots for per-sequence state that is not paged KV (LFM2 conv state, encoder states): a
// running sequence holds one slot, released with the sequence.

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace izwi {

class StateCache {
 public:
  explicit StateCache(int32_t num_slots);

  int32_t num_slots() const { return num_slots_; }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  /// The slot of `seq`, acquiring one if it has none; -1 if none is free.
  int32_t acquire(uint64_t seq);
  /// -1 if `seq` holds no slot.
  int32_t slot(uint64_t seq) const;
  /// Idempotent.
  void release(uint64_t seq);

 private:
  int32_t num_slots_;
  std::vector<int32_t> free_;
  std::unordered_map<uint64_t, int32_t> owner_;
};

}  // namespace izwi
