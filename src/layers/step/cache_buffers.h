#pragma once
// Device memory behind the KV cache: one paged K and V pool per attention layer, and for
// layers with recurrent state (LFM2 short convolutions) a state slot per running sequence plus
// a snapshot per block, so a prefix-cache hit can restore the state at a block boundary.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace izwi {

struct LayerCacheSpec {
  enum class Kind { None, Attention, ShortConv };
  Kind kind = Kind::None;
  int64_t num_kv_heads = 0;  ///< Attention
  int64_t head_dim = 0;      ///< Attention
  int64_t channels = 0;      ///< ShortConv
  int64_t width = 0;         ///< ShortConv: past inputs kept (kernel size - 1)
};

struct LayerCache {
  at::Tensor key;              ///< [num_blocks, block_size, kv_heads, head_dim]
  at::Tensor value;            ///< same shape as key
  at::Tensor state;            ///< [num_slots, width, channels]: a sequence's last inputs, oldest first
  at::Tensor state_snapshots;  ///< [num_blocks, width, channels]: state after a block's last position
};

class CacheBuffers {
 public:
  /// Attention K/V pools in `kv_dtype`, short-conv states in `options`' dtype.
  CacheBuffers(const std::vector<LayerCacheSpec>& layout, int64_t num_blocks, int64_t block_size, int64_t num_slots,
               const at::TensorOptions& options, at::ScalarType kv_dtype);

  LayerCache& layer(size_t index) { return layers_.at(index); }
  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  /// Copies everything a block holds (K, V, state snapshot) from src to dst.
  void copy_block(int32_t src, int32_t dst);
  /// Dense K/V of a model's small secondary decoder (a speech model's per-frame head): per
  /// attention layer of `layout`, `rows` blocks of `positions` each ([rows, positions, kv_heads,
  /// head_dim]), row r being block r. Allocated once and grown when a step brings more rows.
  std::vector<LayerCache>& scratch(const std::vector<LayerCacheSpec>& layout, int64_t rows, int64_t positions);
  /// Bytes held by all pools.
  int64_t bytes() const;
  /// Bytes one block adds to the pools of `layout` (K and V, state snapshots; what sizing the pool
  /// from free memory divides by).
  static int64_t block_bytes(const std::vector<LayerCacheSpec>& layout, int64_t block_size, at::ScalarType dtype,
                             at::ScalarType kv_dtype);

 private:
  std::vector<LayerCache> layers_;
  std::vector<LayerCache> scratch_;
  int64_t num_blocks_;
  int64_t block_size_;
  at::TensorOptions options_;
};

}  // namespace izwi
