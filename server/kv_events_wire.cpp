#include "server/kv_events_wire.h"

#include <msgpack.hpp>

#include <cstring>
#include <type_traits>
#include <variant>

namespace izwi::server {

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_tag(Packer& pk, const char* tag) {
  const auto size = static_cast<uint32_t>(std::strlen(tag));
  pk.pack_str(size);
  pk.pack_str_body(tag, size);
}

// Always the 9-byte uint64 form, even for a small value: the llm-d indexer decodes hashes into
// `any` and accepts only uint64 or int64 there, not the uint8..uint32 a shortest encoding gives.
void pack_hash(Packer& pk, uint64_t hash) { pk.pack_fix_uint64(hash); }

void pack_hashes(Packer& pk, const std::vector<uint64_t>& hashes) {
  pk.pack_array(static_cast<uint32_t>(hashes.size()));
  for (uint64_t hash : hashes) pack_hash(pk, hash);
}

void pack_event(Packer& pk, const KvEvent& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, KvBlockStored>) {
          pk.pack_array(7);
          pack_tag(pk, "BlockStored");
          pack_hashes(pk, e.block_hashes);
          if (e.parent_block_hash) {
            pack_hash(pk, *e.parent_block_hash);
          } else {
            pk.pack_nil();
          }
          pk.pack_array(static_cast<uint32_t>(e.token_ids.size()));
          for (int32_t id : e.token_ids) pk.pack_int32(id);
          pk.pack_int32(e.block_size);
          pk.pack_nil();  // lora_id
          pk.pack_nil();  // medium: nil means the GPU tier to llm-d, i.e. the engine's own memory
        } else if constexpr (std::is_same_v<T, KvBlockRemoved>) {
          pk.pack_array(3);
          pack_tag(pk, "BlockRemoved");
          pack_hashes(pk, e.block_hashes);
          pk.pack_nil();  // medium
        } else {
          pk.pack_array(1);
          pack_tag(pk, "AllBlocksCleared");
        }
      },
      event);
}

}  // namespace

std::string encode_kv_event_batch(const KvEventBatch& batch) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack_array(3);
  pk.pack_double(batch.timestamp);
  pk.pack_array(static_cast<uint32_t>(batch.events.size()));
  for (const KvEvent& event : batch.events) pack_event(pk, event);
  pk.pack_nil();  // data_parallel_rank
  return std::string(buffer.data(), buffer.size());
}

}  // namespace izwi::server
