#include "layers/step/cache_buffers.h"

namespace izwi {

CacheBuffers::CacheBuffers(const std::vector<LayerCacheSpec>& layout, int64_t num_blocks, int64_t block_size,
                           int64_t num_slots, const at::TensorOptions& options, at::ScalarType kv_dtype)
    : num_blocks_(num_blocks), block_size_(block_size), options_(options) {
  layers_.resize(layout.size());
  for (size_t i = 0; i < layout.size(); ++i) {
    const LayerCacheSpec& spec = layout[i];
    LayerCache& cache = layers_[i];
    if (spec.kind == LayerCacheSpec::Kind::Attention) {
      cache.key = at::zeros({num_blocks, block_size, spec.num_kv_heads, spec.head_dim}, options.dtype(kv_dtype));
      cache.value = at::zeros_like(cache.key);
    } else if (spec.kind == LayerCacheSpec::Kind::ShortConv) {
      cache.state = at::zeros({num_slots, spec.width, spec.channels}, options);
      cache.state_snapshots = at::zeros({num_blocks, spec.width, spec.channels}, options);
    }
  }
}

void CacheBuffers::copy_block(int32_t src, int32_t dst) {
  for (LayerCache& cache : layers_) {
    for (at::Tensor* pool : {&cache.key, &cache.value, &cache.state_snapshots}) {
      if (pool->defined()) (*pool)[dst].copy_((*pool)[src]);
    }
  }
}

std::vector<LayerCache>& CacheBuffers::scratch(const std::vector<LayerCacheSpec>& layout, int64_t rows,
                                               int64_t positions) {
  const bool fits = scratch_.size() == layout.size() && !scratch_.empty() && scratch_[0].key.size(0) >= rows &&
                    scratch_[0].key.size(1) == positions;
  if (fits) return scratch_;
  scratch_.assign(layout.size(), LayerCache{});
  for (size_t i = 0; i < layout.size(); ++i) {
    scratch_[i].key = at::zeros({rows, positions, layout[i].num_kv_heads, layout[i].head_dim}, options_);
    scratch_[i].value = at::zeros_like(scratch_[i].key);
  }
  return scratch_;
}

int64_t CacheBuffers::block_bytes(const std::vector<LayerCacheSpec>& layout, int64_t block_size, at::ScalarType dtype,
                                  at::ScalarType kv_dtype) {
  int64_t total = 0;
  for (const LayerCacheSpec& spec : layout) {
    if (spec.kind == LayerCacheSpec::Kind::Attention) {
      total += 2 * block_size * spec.num_kv_heads * spec.head_dim * static_cast<int64_t>(c10::elementSize(kv_dtype));
    } else if (spec.kind == LayerCacheSpec::Kind::ShortConv) {
      total += spec.width * spec.channels * static_cast<int64_t>(c10::elementSize(dtype));
    }
  }
  return total;
}

int64_t CacheBuffers::bytes() const {
  int64_t total = 0;
  for (const LayerCache& cache : layers_) {
    for (const at::Tensor* t : {&cache.key, &cache.value, &cache.state, &cache.state_snapshots}) {
      if (t->defined()) total += t->numel() * static_cast<int64_t>(t->element_size());
    }
  }
  return total;
}

}  // namespace izwi
