#pragma once
// Causal attention of a flattened batch against the paged K/V pools, on float32 CPU memory,
// reading each sequence's keys through its block table (no gathered copies).

#include <cstdint>
#include <vector>

#include "kernels/seq_slice.h"

namespace izwi {

struct PagedAttentionShape {
  int64_t num_heads;
  int64_t num_kv_heads;
  int64_t head_dim;
  int64_t block_size;
  int64_t sliding_window = 0;  ///< > 0: a query at p sees only keys in (p - window, p].
};

/// q, out: [T, num_heads, head_dim]; key_pool, value_pool: [blocks, block_size, kv_heads, head_dim].
/// Query row i of a sequence sits at start_pos + i and attends to keys 0 ..= start_pos + i
/// (the last `sliding_window` of them when a window is set).
void paged_attention_cpu(const float* q, const float* key_pool, const float* value_pool, float* out,
                         const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale);
/// The same over bf16 pools (uint16_t bit patterns), widened to float32 as they are read.
void paged_attention_cpu(const float* q, const uint16_t* key_pool, const uint16_t* value_pool, float* out,
                         const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale);

}  // namespace izwi
