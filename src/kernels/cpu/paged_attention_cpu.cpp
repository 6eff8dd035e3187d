#include "kernels/cpu/paged_attention_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace izwi {

namespace {

struct WorkItem {
  const SeqSlice* seq;
  int64_t kv_head;
  int64_t row;  ///< query row within the sequence's slice
};

inline float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

inline void axpy(float alpha, const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace

void paged_attention_cpu(const float* q, const float* key_pool, const float* value_pool, float* out,
                         const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale) {
  const int64_t H = shape.num_heads, KVH = shape.num_kv_heads, D = shape.head_dim, BS = shape.block_size;
  const int64_t group = H / KVH;
  std::vector<WorkItem> work;
  int64_t max_context = 0;
  for (const SeqSlice& s : seqs) {
    max_context = std::max(max_context, s.start_pos + s.length);
    for (int64_t row = 0; row < s.length; ++row) {
      for (int64_t kvh = 0; kvh < KVH; ++kvh) work.push_back({&s, kvh, row});
    }
  }
  const int64_t kv_row_stride = KVH * D;  // between consecutive positions inside a block

  at::parallel_for(0, static_cast<int64_t>(work.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(group * max_context));
    for (int64_t w = begin; w < end; ++w) {
      const WorkItem& item = work[w];
      const SeqSlice& s = *item.seq;
      const std::vector<int32_t>& table = *s.block_table;
      const int64_t context = s.start_pos + item.row + 1;
      const int64_t token = s.offset + item.row;
      const float* q_row = q + (token * H + item.kv_head * group) * D;
      float* out_row = out + (token * H + item.kv_head * group) * D;

      // Scores for every head of the group against every visible key.
      for (int64_t j = 0; j < context; ++j) {
        const float* k = key_pool + ((table[j / BS] * BS + j % BS) * kv_row_stride) + item.kv_head * D;
        for (int64_t g = 0; g < group; ++g) scores[g * context + j] = dot(q_row + g * D, k, D) * scale;
      }
      for (int64_t g = 0; g < group; ++g) {
        float* sc = scores.data() + g * context;
        const float max_score = *std::max_element(sc, sc + context);
        float total = 0.0f;
        for (int64_t j = 0; j < context; ++j) {
          sc[j] = std::exp(sc[j] - max_score);
          total += sc[j];
        }
        const float inv_total = 1.0f / total;
        for (int64_t j = 0; j < context; ++j) sc[j] *= inv_total;
        std::fill(out_row + g * D, out_row + (g + 1) * D, 0.0f);
      }
      for (int64_t j = 0; j < context; ++j) {
        const float* v = value_pool + ((table[j / BS] * BS + j % BS) * kv_row_stride) + item.kv_head * D;
        for (int64_t g = 0; g < group; ++g) axpy(scores[g * context + j], v, out_row + g * D, D);
      }
    }
  });
}

}  // namespace izwi
