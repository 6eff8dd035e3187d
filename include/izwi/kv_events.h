#pragma once
/// @file kv_events.h
/// KV-cache events: what the prefix cache stores and drops, in the shape of vLLM's
/// vllm/distributed/kv_events.py, so a fleet router (e.g. the llm-d KV-cache indexer) can send
/// requests to the engine that already holds their prefix. Engine::set_kv_event_listener
/// receives them; docs/architecture.md (cache design) defines the block hash and when each event
/// is emitted, docs/kv_events.md the ZeroMQ wire format izwi-server publishes them in.

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace izwi {

/// Full blocks entered the prefix cache: a chain, each block the child of the one before it.
struct KvBlockStored {
  std::vector<uint64_t> block_hashes;         ///< One per block, in chain order.
  std::optional<uint64_t> parent_block_hash;  ///< Parent of the first block; empty at the root.
  std::vector<int32_t> token_ids;             ///< block_size keys per block, concatenated.
  int32_t block_size = 0;                     ///< Positions per block (EngineConfig::block_size).
};

/// Blocks left the prefix cache (evicted); their hashes are no longer cached.
struct KvBlockRemoved {
  std::vector<uint64_t> block_hashes;  ///< The blocks removed.
};

/// Every block left the prefix cache.
struct KvAllBlocksCleared {};

/// One change to the prefix cache.
using KvEvent = std::variant<KvBlockStored, KvBlockRemoved, KvAllBlocksCleared>;

/// The events of one engine step, in the order they happened.
struct KvEventBatch {
  double timestamp = 0;         ///< Seconds since the Unix epoch (system clock), as vLLM's time.time().
  std::vector<KvEvent> events;  ///< In the order they happened.
};

}  // namespace izwi
