#pragma once
// The identity a cached block is published under (KV events): a 64-bit hash of its whole prefix,
// stable across processes and machines so an indexer can recompute it from token ids alone.
// FNV-1a 64 over the parent block's hash (kRootBlockHash for a first block) as 8 little-endian
// bytes, then each of the block's keys as 4 little-endian bytes (two's complement int32).

#include <cstdint>

namespace izwi {

/// The "parent hash" hashed into a block at the start of a sequence.
constexpr uint64_t kRootBlockHash = 0;

/// Hash of the block holding `tokens[0, n)` whose parent block has hash `parent`.
uint64_t block_hash(uint64_t parent, const int32_t* tokens, int32_t n);

}  // namespace izwi
