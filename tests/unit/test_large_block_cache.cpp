// LargeBlockCache: large blocks freed are handed out again instead of being taken from the system,
// within the cap; small ones pass through to the allocator it wraps.

#include "common/large_block_cache.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace izwi {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(LargeBlockCache, ReusesAFreedBlockForRequestsItFits) {
  LargeBlockCache cache(512 * kMiB);
  void* first = nullptr;
  {
    c10::DataPtr block = cache.allocate(40 * kMiB);
    first = block.get();
    std::memset(first, 1, 40 * kMiB);  // writable over its whole size
  }
  EXPECT_EQ(cache.system_allocations(), 1);
  EXPECT_EQ(cache.cached_bytes(), 40 * kMiB);
  {
    // The same size and anything from half the block up reuse it ...
    c10::DataPtr same = cache.allocate(40 * kMiB);
    EXPECT_EQ(same.get(), first);
    EXPECT_EQ(cache.cached_bytes(), 0u);
  }
  {
    c10::DataPtr smaller = cache.allocate(LargeBlockCache::kMinBytes);
    EXPECT_EQ(smaller.get(), first);
  }
  EXPECT_EQ(cache.system_allocations(), 1);
  {
    // ... but not a larger request ...
    c10::DataPtr larger = cache.allocate(41 * kMiB);
    EXPECT_NE(larger.get(), first);
    EXPECT_EQ(cache.system_allocations(), 2);
  }
  // ... nor one under half of it (that would hold the rest idle).
  LargeBlockCache fresh(512 * kMiB);
  void* hundred = fresh.allocate(100 * kMiB).get();
  c10::DataPtr under_half = fresh.allocate(40 * kMiB);
  EXPECT_NE(under_half.get(), hundred);
  EXPECT_EQ(fresh.system_allocations(), 2);
}

TEST(LargeBlockCache, SmallBlocksAreTheDefaultAllocatorsAndTheRawInterfaceWorks) {
  LargeBlockCache cache(512 * kMiB);
  {
    c10::DataPtr small = cache.allocate(LargeBlockCache::kMinBytes - 1);
    EXPECT_NE(small.get(), nullptr);
    EXPECT_EQ(small.get_deleter(), c10::GetDefaultCPUAllocator()->raw_deleter());
  }
  EXPECT_EQ(cache.system_allocations(), 0);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  // libtorch's kernels take scratch through the raw interface: both sizes go back where they came from.
  void* small = cache.raw_allocate(1000);
  void* large = cache.raw_allocate(40 * kMiB);
  cache.raw_deallocate(small);
  cache.raw_deallocate(large);
  EXPECT_EQ(cache.cached_bytes(), 40 * kMiB);
  EXPECT_EQ(cache.raw_allocate(40 * kMiB), large);
  cache.raw_deallocate(large);
}

TEST(LargeBlockCache, KeepsAtMostItsCapFreeingTheOldestFirst) {
  LargeBlockCache cache(100 * kMiB);
  void* oldest = nullptr;
  void* newer = nullptr;
  {
    c10::DataPtr a = cache.allocate(40 * kMiB), b = cache.allocate(40 * kMiB), c = cache.allocate(40 * kMiB);
    oldest = a.get();
    newer = b.get();
    a.clear();  // freed first
    b.clear();
  }  // c freed last: 120 MiB would be held, so a goes back to the system
  EXPECT_EQ(cache.cached_bytes(), 80 * kMiB);
  c10::DataPtr x = cache.allocate(40 * kMiB), y = cache.allocate(40 * kMiB);
  EXPECT_TRUE(x.get() != oldest && y.get() != oldest);
  EXPECT_TRUE(x.get() == newer || y.get() == newer);
  EXPECT_EQ(cache.system_allocations(), 3);
  // A block larger than the whole cap is never kept.
  cache.allocate(120 * kMiB);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

// libtorch 2.x declares allocate without const (1.13, this project's Debian libtorch, with it):
// the adapter overrides that form as well and forwards it to allocate_block.
struct MutableAllocateBase {
  virtual ~MutableAllocateBase() = default;
  virtual c10::DataPtr allocate(std::size_t bytes) = 0;
};
char fixed_blocks[16];
struct FixedBlocks final : detail::WithAllocate<MutableAllocateBase> {
  c10::DataPtr allocate_block(std::size_t bytes) const override {
    return {fixed_blocks + bytes, c10::Device(c10::kCPU)};
  }
};

TEST(LargeBlockCache, AllocateOverridesTheNonConstFormOfLibtorch2) {
  static_assert(!std::is_abstract_v<FixedBlocks>);
  FixedBlocks blocks;
  MutableAllocateBase& base = blocks;
  EXPECT_EQ(base.allocate(3).get(), fixed_blocks + 3);
}

// Installed, it serves libtorch's CPU tensors: a step's large temporary gets last step's memory.
// In a fresh process (the install is process-wide and permanent).
[[noreturn]] void exit_whether_tensors_reuse_memory() {
  const LargeBlockCache* cache = install_large_block_cache();
  if (cache == nullptr || install_large_block_cache() != cache) std::_Exit(2);
  const void* first = at::empty({64, 151936}).data_ptr();  // 39 MB of logits, freed at once
  const void* second = at::empty({64, 151936}).data_ptr();
  if (first != second || cache->system_allocations() != 1) std::_Exit(1);
  // Ops whose kernels take raw scratch from the allocator, small and large.
  const at::Tensor small = at::gelu(at::randn({1000})), large = at::gelu(at::randn({64, 151936}));
  std::_Exit(small.size(0) == 1000 && large.size(1) == 151936 ? 0 : 3);
}

TEST(LargeBlockCache, InstalledItServesLibtorchTensors) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_whether_tensors_reuse_memory(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace izwi
