#pragma once
// Fixed pool of KV block ids with reference counts. Freed blocks go on a LIFO free list, so the
// most recently freed (cache-warm) block is handed out first.

#include <cstdint>
#include <vector>

namespace izwi {

class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t num_blocks);

  int32_t num_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_list_.size()); }

  /// Appends `n` blocks with ref count 1 to `out`. Returns false, changing nothing, if fewer are free.
  bool allocate(int32_t n, std::vector<int32_t>* out);
  /// Adds an owner to a block in use.
  void retain(int32_t block);
  /// Drops an owner; the block returns to the free list when none is left.
  void release(int32_t block);
  int32_t ref_count(int32_t block) const;

 private:
  void check_id(int32_t block) const;
  std::vector<int32_t> free_list_;  ///< back() is handed out next
  std::vector<int32_t> ref_counts_;
};

}  // namespace izwi
