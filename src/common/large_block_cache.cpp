#include "common/large_block_cache.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace izwi {

namespace {

constexpr size_t kAlignment = 64;  // libtorch's own CPU alignment
constexpr size_t kProcessCapBytes = size_t{512} << 20;

// The large blocks handed out, by address: libtorch's raw interface gives a deleter only the
// address, so the owner and size are found here.
struct LiveBlock {
  const LargeBlockCache* cache;
  size_t bytes;
};
std::mutex& live_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::unordered_map<void*, LiveBlock>& live_blocks() {
  static auto* blocks = new std::unordered_map<void*, LiveBlock>();  // outlives static destruction
  return *blocks;
}

}  // namespace

LargeBlockCache::LargeBlockCache(size_t cap_bytes) : cap_bytes_(cap_bytes) {}

LargeBlockCache::~LargeBlockCache() {
  for (const auto& [bytes, block] : free_) std::free(block.first);
}

c10::DataPtr LargeBlockCache::allocate_block(size_t bytes) const {
  if (bytes < kMinBytes) return c10::GetDefaultCPUAllocator()->allocate(bytes);
  void* data = nullptr;
  size_t block_bytes = bytes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto fit = free_.lower_bound(bytes);
    if (fit != free_.end() && fit->first / 2 <= bytes) {
      block_bytes = fit->first;
      data = fit->second.first;
      cached_bytes_ -= block_bytes;
      free_.erase(fit);
    } else {
      ++system_allocations_;
    }
  }
  if (data == nullptr && posix_memalign(&data, kAlignment, bytes) != 0) {
    TORCH_CHECK(false, "LargeBlockCache: out of memory allocating ", bytes, " bytes");
  }
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    live_blocks()[data] = LiveBlock{this, block_bytes};
  }
  // The context is the address itself, as libtorch's raw interface requires.
  return {data, data, &free_block, c10::Device(c10::DeviceType::CPU)};
}

void LargeBlockCache::free_block(void* data) {
  LiveBlock block{nullptr, 0};
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    const auto it = live_blocks().find(data);
    if (it != live_blocks().end()) {
      block = it->second;
      live_blocks().erase(it);
    }
  }
  if (block.cache == nullptr) {
    c10::GetDefaultCPUAllocator()->raw_deleter()(data);
    return;
  }
  block.cache->keep(data, block.bytes);
}

void LargeBlockCache::keep(void* data, size_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.emplace(bytes, std::make_pair(data, frees_++));
  cached_bytes_ += bytes;
  while (cached_bytes_ > cap_bytes_) {
    const auto oldest = std::min_element(
        free_.begin(), free_.end(), [](const auto& a, const auto& b) { return a.second.second < b.second.second; });
    std::free(oldest->second.first);
    cached_bytes_ -= oldest->first;
    free_.erase(oldest);
  }
}

size_t LargeBlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

int64_t LargeBlockCache::system_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return system_allocations_;
}

const LargeBlockCache* install_large_block_cache() {
  // Never destroyed: tensors holding its blocks may outlive static destruction.
  static const LargeBlockCache* const installed = []() -> const LargeBlockCache* {
    if (c10::GetCPUAllocator() != c10::GetDefaultCPUAllocator()) return nullptr;
    auto* cache = new LargeBlockCache(kProcessCapBytes);
    c10::SetCPUAllocator(cache);
    if (c10::GetCPUAllocator() == cache) return cache;
    delete cache;
    return nullptr;
  }();
  return installed;
}

}  // namespace izwi
