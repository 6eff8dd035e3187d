// The pre-token cache: hits return what was stored, it stays bounded, long pieces are not kept.

#include <gtest/gtest.h>

#include <string>

#include "tokenizer/token_cache.h"

namespace izwi {
namespace {

TEST(TokenizerCache, ReturnsStoredIdsAppended) {
  TokenCache cache;
  const int32_t ids[] = {7, 8, 9};
  std::vector<int32_t> out = {1};
  EXPECT_FALSE(cache.lookup("piece", out));
  cache.insert("piece", ids, 3);
  EXPECT_TRUE(cache.lookup("piece", out));
  EXPECT_EQ(out, (std::vector<int32_t>{1, 7, 8, 9}));
}

TEST(TokenizerCache, StaysBoundedAndSkipsLongPieces) {
  TokenCache cache;
  const int32_t id = 5;
  const size_t total = TokenCache::kShards * TokenCache::kMaxEntriesPerShard * 3;
  for (size_t i = 0; i < total; ++i) cache.insert("p" + std::to_string(i), &id, 1);
  size_t kept = 0;
  std::vector<int32_t> out;
  for (size_t i = 0; i < total; ++i) kept += cache.lookup("p" + std::to_string(i), out) ? 1 : 0;
  EXPECT_LE(kept, TokenCache::kShards * TokenCache::kMaxEntriesPerShard);
  EXPECT_GT(kept, 0u);
  const std::string long_piece(TokenCache::kMaxPieceBytes + 1, 'x');
  cache.insert(long_piece, &id, 1);
  EXPECT_FALSE(cache.lookup(long_piece, out));
}

}  // namespace
}  // namespace izwi
