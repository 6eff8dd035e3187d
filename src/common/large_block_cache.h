#pragma once
// libtorch's CPU allocator wrapped so that blocks too large for glibc's heap are kept for reuse.

#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace izwi {

namespace detail {
/// c10::Allocator, plus the plain-memcpy copy_data that libtorch 2.3 and later declare pure
/// virtual (1.13, this project's Debian libtorch, has none).
template <typename Base, typename = void>
struct WithHostCopy : Base {};
template <typename Base>
struct WithHostCopy<Base, std::void_t<decltype(&Base::copy_data)>> : Base {
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

/// c10::Allocator::allocate is const in libtorch 1.13 and not in 2.x (the torch wheels): this
/// overrides whichever the Base declares and forwards to allocate_block, which is const in both.
template <typename Base, bool = std::is_same_v<decltype(&Base::allocate), c10::DataPtr (Base::*)(std::size_t) const>>
struct WithAllocate : Base {
  c10::DataPtr allocate(std::size_t bytes) const override { return allocate_block(bytes); }
  virtual c10::DataPtr allocate_block(std::size_t bytes) const = 0;
};
template <typename Base>
struct WithAllocate<Base, false> : Base {
  c10::DataPtr allocate(std::size_t bytes) override { return allocate_block(bytes); }
  virtual c10::DataPtr allocate_block(std::size_t bytes) const = 0;
};
}  // namespace detail

/// Wraps c10's default CPU allocator. Blocks of at least kMinBytes are allocated here and, when
/// freed, kept (up to cap_bytes in all, the oldest freed going first) for the next allocation they
/// fit: a block serves requests from half its size up to its size. Smaller blocks are the default
/// allocator's. glibc maps every block above 32 MiB (its largest heap threshold) afresh and unmaps
/// it when freed, so without this a step's logits for 64 sequences over a 152K vocabulary (39 MB)
/// cost a page fault and the kernel's zeroing per 4 KiB page on every step (in a VM an exit to the
/// hypervisor each). Implements the raw interface too (libtorch's kernels use it for scratch).
class LargeBlockCache final : public detail::WithHostCopy<detail::WithAllocate<c10::Allocator>> {
 public:
  static constexpr size_t kMinBytes = size_t{32} << 20;

  explicit LargeBlockCache(size_t cap_bytes);
  ~LargeBlockCache() override;  ///< frees the cached blocks; every block handed out must be back
  LargeBlockCache(const LargeBlockCache&) = delete;
  LargeBlockCache& operator=(const LargeBlockCache&) = delete;

  c10::DataPtr allocate_block(size_t bytes) const override;
  c10::DeleterFnPtr raw_deleter() const override { return &free_block; }

  /// Bytes of freed blocks held for reuse.
  size_t cached_bytes() const;
  /// Large blocks taken from the system so far (a reuse takes none).
  int64_t system_allocations() const;

 private:
  /// A block's deleter: a large block goes back to the cache that made it, any other to the
  /// default allocator.
  static void free_block(void* data);
  void keep(void* data, size_t bytes) const;

  size_t cap_bytes_;
  mutable std::mutex mutex_;
  /// bytes -> (block, when it was freed)
  mutable std::multimap<size_t, std::pair<void*, uint64_t>> free_;
  mutable size_t cached_bytes_ = 0;
  mutable uint64_t frees_ = 0;
  mutable int64_t system_allocations_ = 0;
};

/// Makes one process-wide LargeBlockCache (cap 512 MiB) libtorch's CPU allocator, where the
/// default one is in place. Once per process; later calls return the same. Null where another
/// CPU allocator was installed (the host's choice stands).
const LargeBlockCache* install_large_block_cache();

}  // namespace izwi
