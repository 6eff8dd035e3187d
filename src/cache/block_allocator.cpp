#include "cache/block_allocator.h"

#include "common/check.h"

namespace izwi {

BlockAllocator::BlockAllocator(int32_t num_blocks) {
  IZWI_CHECK(num_blocks > 0, "num_blocks {} must be positive", num_blocks);
  ref_counts_.assign(static_cast<size_t>(num_blocks), 0);
  free_list_.reserve(static_cast<size_t>(num_blocks));
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_list_.push_back(b);  // block 0 first
}

bool BlockAllocator::allocate(int32_t n, std::vector<int32_t>* out) {
  if (n < 0 || n > num_free()) return false;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t block = free_list_.back();
    free_list_.pop_back();
    ref_counts_[block] = 1;
    out->push_back(block);
  }
  return true;
}

void BlockAllocator::retain(int32_t block) {
  check_id(block);
  IZWI_CHECK(ref_counts_[block] > 0, "retain of free block {}", block);
  ++ref_counts_[block];
}

void BlockAllocator::release(int32_t block) {
  check_id(block);
  IZWI_CHECK(ref_counts_[block] > 0, "release of free block {}", block);
  if (--ref_counts_[block] == 0) free_list_.push_back(block);
}

int32_t BlockAllocator::ref_count(int32_t block) const {
  check_id(block);
  return ref_counts_[block];
}

void BlockAllocator::check_id(int32_t block) const {
  IZWI_CHECK(block >= 0 && block < num_blocks(), "block id {} out of range [0, {})", block, num_blocks());
}

}  // namespace izwi
