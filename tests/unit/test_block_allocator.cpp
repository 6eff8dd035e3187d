#include <gtest/gtest.h>

#include "cache/block_allocator.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

TEST(BlockAllocator, HandsOutBlocksInOrderThenLifo) {
  BlockAllocator alloc(8);
  std::vector<int32_t> a, b, c;
  ASSERT_TRUE(alloc.allocate(3, &a));
  ASSERT_TRUE(alloc.allocate(2, &b));
  EXPECT_EQ(a, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(b, (std::vector<int32_t>{3, 4}));
  for (int32_t block : a) alloc.release(block);  // freed 0, 1, 2: 2 is on top
  ASSERT_TRUE(alloc.allocate(2, &c));
  EXPECT_EQ(c, (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(alloc.num_free(), 4);
}

TEST(BlockAllocator, FailedAllocationChangesNothing) {
  BlockAllocator alloc(4);
  std::vector<int32_t> got;
  ASSERT_TRUE(alloc.allocate(3, &got));
  std::vector<int32_t> more;
  EXPECT_FALSE(alloc.allocate(2, &more));
  EXPECT_TRUE(more.empty());
  EXPECT_EQ(alloc.num_free(), 1);
  ASSERT_TRUE(alloc.allocate(1, &more));
  EXPECT_EQ(more, std::vector<int32_t>{3});
}

TEST(BlockAllocator, RefCountsKeepSharedBlocksAlive) {
  BlockAllocator alloc(2);
  std::vector<int32_t> got;
  ASSERT_TRUE(alloc.allocate(1, &got));
  alloc.retain(got[0]);
  EXPECT_EQ(alloc.ref_count(got[0]), 2);
  alloc.release(got[0]);
  EXPECT_EQ(alloc.num_free(), 1);
  alloc.release(got[0]);
  EXPECT_EQ(alloc.num_free(), 2);
  EXPECT_EQ(alloc.ref_count(got[0]), 0);
}

TEST(BlockAllocator, MisuseIsReportedNotIgnored) {
  BlockAllocator alloc(2);
  EXPECT_THROW(alloc.release(0), Error);  // double free
  EXPECT_THROW(alloc.retain(1), Error);   // retain of a free block
  EXPECT_THROW(alloc.ref_count(5), Error);
  EXPECT_THROW(BlockAllocator(0), Error);
}

}  // namespace
}  // namespace izwi
