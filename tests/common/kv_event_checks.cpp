#include "common/kv_event_checks.h"

#include <fmt/format.h>

#include <variant>

namespace izwi::testing {

namespace {

void fnv1a(uint64_t& h, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    h ^= (value >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
}

}  // namespace

uint64_t documented_block_hash(std::optional<uint64_t> parent, const std::vector<int32_t>& tokens, size_t begin,
                               size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  fnv1a(h, parent.value_or(0), 8);
  for (size_t i = begin; i < begin + n; ++i) fnv1a(h, static_cast<uint32_t>(tokens[i]), 4);
  return h;
}

std::vector<uint64_t> chain_hashes(const std::vector<int32_t>& tokens, int32_t block_size, int32_t num_blocks) {
  std::vector<uint64_t> hashes;
  std::optional<uint64_t> parent;
  for (int32_t b = 0; b < num_blocks; ++b) {
    parent =
        documented_block_hash(parent, tokens, static_cast<size_t>(b * block_size), static_cast<size_t>(block_size));
    hashes.push_back(*parent);
  }
  return hashes;
}

std::string KvEventReplay::apply(const KvEvent& event) {
  if (const auto* stored = std::get_if<KvBlockStored>(&event)) {
    const size_t n = stored->block_hashes.size();
    if (n == 0 || stored->block_size <= 0 || stored->token_ids.size() != n * static_cast<size_t>(stored->block_size)) {
      return fmt::format("BlockStored of {} hashes with {} token ids of block size {}", n, stored->token_ids.size(),
                         stored->block_size);
    }
    if (stored->parent_block_hash && held_.count(*stored->parent_block_hash) == 0) {
      return fmt::format("BlockStored under parent {:#x}, which is not cached", *stored->parent_block_hash);
    }
    std::optional<uint64_t> parent = stored->parent_block_hash;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t expected =
          documented_block_hash(parent, stored->token_ids, i * stored->block_size, stored->block_size);
      if (stored->block_hashes[i] != expected) {
        return fmt::format("BlockStored hash {:#x} at {}, the documented hash is {:#x}", stored->block_hashes[i], i,
                           expected);
      }
      if (!held_.insert(expected).second) return fmt::format("BlockStored {:#x} while it is cached", expected);
      parent = expected;
    }
  } else if (const auto* removed = std::get_if<KvBlockRemoved>(&event)) {
    for (uint64_t hash : removed->block_hashes) {
      if (held_.erase(hash) == 0) return fmt::format("BlockRemoved {:#x}, which is not cached", hash);
    }
  } else {
    held_.clear();
  }
  return "";
}

std::string KvEventReplay::apply(const std::vector<KvEvent>& events) {
  for (const KvEvent& event : events) {
    if (std::string problem = apply(event); !problem.empty()) return problem;
  }
  return "";
}

}  // namespace izwi::testing
