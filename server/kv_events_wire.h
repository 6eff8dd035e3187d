#pragma once
// The msgpack payload of one KV event batch, as vLLM's msgspec structs encode it (array_like,
// tagged) and the llm-d KV-cache indexer decodes it (docs/kv_events.md):
//   [timestamp, [event...], data_parallel_rank]
//   ["BlockStored", [hash...], parent_hash | nil, [token_id...], block_size, lora_id, medium]
//   ["BlockRemoved", [hash...], medium]
//   ["AllBlocksCleared"]
// Hashes are always msgpack's 9-byte uint64 form (what llm-d's decoder needs). izwi has no LoRA, one medium (the
// engine's device memory) and no data parallelism: lora_id, medium and data_parallel_rank are nil.

#include <string>

#include "izwi/kv_events.h"

namespace izwi::server {

std::string encode_kv_event_batch(const KvEventBatch& batch);

}  // namespace izwi::server
