// retain_freed_memory: after it, a block of a step's size is carved from the heap rather than
// mapped on its own, and freeing it keeps the memory in the process. Each case runs in a fresh
// process (gtest's threadsafe death-test style re-executes the binary), since malloc's settings
// are process-wide and glibc adjusts its default threshold as mapped blocks are freed.

#include <gtest/gtest.h>

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/retain_freed_memory.h"

namespace izwi {
namespace {

#if defined(__GLIBC__)
constexpr size_t kBlock = 24 << 20;  // above glibc's default 128 KiB threshold, below its 32 MiB cap

// Exit code 0 when a fresh block of kBlock bytes is mapped on its own (hblks counts such blocks).
[[noreturn]] void exit_whether_block_is_mapped(bool retain) {
  if (retain && !retain_freed_memory()) std::_Exit(2);
  const size_t mapped_before = mallinfo2().hblks;
  void* block = std::malloc(kBlock);
  const bool mapped = block != nullptr && mallinfo2().hblks > mapped_before;
  std::free(block);
  // Kept: the freed block is free heap memory the process still holds.
  if (retain && mallinfo2().fordblks < kBlock) std::_Exit(3);
  std::_Exit(mapped ? 0 : 1);
}

TEST(RetainFreedMemory, LargeBlocksComeFromTheHeapAndStayAfterFree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // glibc's default maps the block on its own (and unmaps it when freed) ...
  EXPECT_EXIT(exit_whether_block_is_mapped(false), ::testing::ExitedWithCode(0), "");
  // ... and after retain_freed_memory the heap serves it and keeps it.
  EXPECT_EXIT(exit_whether_block_is_mapped(true), ::testing::ExitedWithCode(1), "");
}
#else
TEST(RetainFreedMemory, ChangesNothingWithoutGlibc) { EXPECT_FALSE(retain_freed_memory()); }
#endif

}  // namespace
}  // namespace izwi
