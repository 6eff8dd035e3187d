#pragma once
// One sequence's share of a flattened step batch and where its cache lives: the plain data the
// kernels read (ForwardContext holds one per sequence).

#include <cstdint>
#include <vector>

namespace izwi {

struct SeqSlice {
  int64_t offset = 0;     ///< First row of this sequence in the flattened batch.
  int64_t length = 0;     ///< New positions.
  int64_t start_pos = 0;  ///< Positions already cached.
  const std::vector<int32_t>* block_table = nullptr;
  int32_t state_slot = -1;
  bool fresh_state = false;
  int32_t restore_block = -1;
};

}  // namespace izwi
