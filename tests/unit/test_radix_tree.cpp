#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "cache/radix_tree.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

std::vector<int32_t> chunk(int32_t base, int32_t size = 4) {
  std::vector<int32_t> c;
  for (int32_t i = 0; i < size; ++i) c.push_back(base + i);
  return c;
}

TEST(RadixTree, MatchFollowsInsertedBlocks) {
  RadixTree tree(4);
  bool inserted = false;
  RadixNode* a = tree.insert(nullptr, chunk(0).data(), 10, &inserted);
  EXPECT_TRUE(inserted);
  RadixNode* b = tree.insert(a, chunk(4).data(), 11, &inserted);
  EXPECT_TRUE(inserted);
  std::vector<int32_t> tokens = chunk(0, 12);
  auto path = tree.match(tokens.data(), 3);
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0], a);
  EXPECT_EQ(path[1], b);
  EXPECT_EQ(tree.match(tokens.data(), 1).size(), 1u);  // capped by max_blocks
  tokens[5] = 99;
  EXPECT_EQ(tree.match(tokens.data(), 3).size(), 1u);
  // Inserting the same chunk again returns the existing node and keeps its block.
  RadixNode* again = tree.insert(nullptr, chunk(0).data(), 42, &inserted);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again, a);
  EXPECT_EQ(a->block, 10);
}

TEST(RadixTree, LockingMovesBlocksBetweenEvictableAndProtected) {
  RadixTree tree(4);
  bool inserted = false;
  RadixNode* a = tree.insert(nullptr, chunk(0).data(), 1, &inserted);
  RadixNode* b = tree.insert(a, chunk(4).data(), 2, &inserted);
  EXPECT_EQ(tree.evictable_blocks(), 2);
  tree.lock(a);
  tree.lock(b);
  EXPECT_EQ(tree.evictable_blocks(), 0);
  EXPECT_EQ(tree.protected_blocks(), 2);
  EXPECT_TRUE(tree.evict(5).empty());  // nothing unlocked
  tree.unlock(b);
  tree.unlock(a);
  EXPECT_EQ(tree.evictable_blocks(), 2);
  EXPECT_THROW(tree.unlock(a), Error);  // below zero is a bug
}

TEST(RadixTree, EvictsLeastRecentlyUsedLeavesAndCascades) {
  RadixTree tree(4);
  bool inserted = false;
  RadixNode* root_a = tree.insert(nullptr, chunk(0).data(), 1, &inserted);
  RadixNode* leaf_a = tree.insert(root_a, chunk(4).data(), 2, &inserted);
  RadixNode* root_b = tree.insert(nullptr, chunk(100).data(), 3, &inserted);
  // Touch branch a after b: b becomes least recently used.
  tree.lock(root_a);
  tree.lock(leaf_a);
  tree.unlock(leaf_a);
  tree.unlock(root_a);
  EXPECT_EQ(tree.evict(1), std::vector<int32_t>{3});
  // Evicting the leaf of branch a makes its parent a leaf, evicted next.
  EXPECT_EQ(tree.evict(2), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(tree.num_nodes(), 0);
  (void)root_b;
}

TEST(RadixTree, EvictionNeverTouchesLockedNodes) {
  RadixTree tree(4);
  bool inserted = false;
  RadixNode* a = tree.insert(nullptr, chunk(0).data(), 1, &inserted);
  RadixNode* b = tree.insert(a, chunk(4).data(), 2, &inserted);
  tree.insert(a, chunk(8).data(), 3, &inserted);
  tree.lock(a);
  tree.lock(b);
  EXPECT_EQ(tree.evict(10), std::vector<int32_t>{3});
  EXPECT_EQ(tree.num_nodes(), 2);
}

// Random insert / match / lock / unlock / evict; locks are taken on whole paths as sequences do.
TEST(RadixTree, PropertyRandomOperationsKeepAccountingConsistent) {
  std::mt19937 rng(1234);
  RadixTree tree(2);
  int32_t next_block = 0;
  std::vector<std::vector<RadixNode*>> held;  // locked paths
  std::set<int32_t> live_blocks;
  for (int iter = 0; iter < 5000; ++iter) {
    const int op = static_cast<int>(rng() % 4);
    if (op == 0) {  // insert a random path of up to 4 blocks over a small alphabet, lock it
      std::vector<RadixNode*> path;
      RadixNode* parent = nullptr;
      const int len = 1 + static_cast<int>(rng() % 4);
      for (int d = 0; d < len; ++d) {
        std::vector<int32_t> c = {static_cast<int32_t>(rng() % 3), static_cast<int32_t>(rng() % 3)};
        bool inserted = false;
        RadixNode* node = tree.insert(parent, c.data(), next_block, &inserted);
        if (inserted) live_blocks.insert(next_block++);
        tree.lock(node);
        path.push_back(node);
        parent = node;
      }
      held.push_back(path);
    } else if (op == 1 && !held.empty()) {  // release a random path
      const size_t i = rng() % held.size();
      for (RadixNode* node : held[i]) tree.unlock(node);
      held.erase(held.begin() + static_cast<ptrdiff_t>(i));
    } else if (op == 2) {
      for (int32_t block : tree.evict(static_cast<int32_t>(rng() % 3))) {
        EXPECT_EQ(live_blocks.erase(block), 1u) << "evicted a block twice or one never inserted";
      }
    } else {
      std::vector<int32_t> tokens(8);
      for (auto& t : tokens) t = static_cast<int32_t>(rng() % 3);
      auto path = tree.match(tokens.data(), 4);
      for (size_t d = 0; d + 1 < path.size(); ++d) EXPECT_EQ(path[d + 1]->parent, path[d]);
    }
    // Locked nodes survive; counts agree with a walk of the tree.
    std::map<const RadixNode*, int32_t> expected;
    for (const auto& path : held) {
      for (const RadixNode* node : path) ++expected[node];
    }
    int32_t nodes = 0, unlocked = 0;
    tree.for_each_node([&](const RadixNode& node) {
      ++nodes;
      const int32_t locks = expected.count(&node) ? expected[&node] : 0;
      EXPECT_EQ(node.lock_count, locks);
      unlocked += node.lock_count == 0 ? 1 : 0;
    });
    ASSERT_EQ(nodes, tree.num_nodes());
    ASSERT_EQ(unlocked, tree.evictable_blocks());
    ASSERT_EQ(static_cast<int32_t>(live_blocks.size()), nodes);
  }
}

}  // namespace
}  // namespace izwi
