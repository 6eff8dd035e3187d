#include "kernels/cpu/paged_attention_cpu.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_ps, GCC bug 105593) wherever the
// reductions are inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/simd.h"

namespace izwi {

namespace {

struct WorkItem {
  const SeqSlice* seq;
  int64_t kv_head;   ///< the first KV head
  int64_t kv_heads;  ///< KV heads from kv_head on: 1, or all of them (see attend_paged)
  int64_t row;       ///< query row within the sequence's slice
};

// Addresses of key/value vectors of one KV head through a sequence's block table; KV is float
// or uint16_t (bf16 bits).
template <typename KV>
struct PagedRows {
  const KV* pool;
  const int32_t* table;
  int64_t block_size, row_stride, head_offset;
  int64_t first;  ///< Position of index 0 (the start of a sliding window).
  const KV* at(int64_t index) const {
    const int64_t position = first + index;
    return pool +
           (static_cast<int64_t>(table[position / block_size]) * block_size + position % block_size) * row_stride +
           head_offset;
  }
};

// Rows this far ahead are prefetched: a row of one KV head is a short piece of a long stride
// that the hardware prefetchers follow poorly once the pools outgrow the caches.
constexpr int64_t kPrefetchAhead = 8;

template <typename KV>
inline void prefetch_row(const KV* row, int64_t D) {
  for (int64_t d = 0; d < D; d += 64 / static_cast<int64_t>(sizeof(KV))) __builtin_prefetch(row + d);
}

inline float to_float(float v) { return v; }
inline float to_float(uint16_t bits) { return bf16_to_float(bits); }

void softmax_rows(float* scores, int64_t rows, int64_t context) {
  for (int64_t g = 0; g < rows; ++g) {
    float* sc = scores + g * context;
    const float max_score = *std::max_element(sc, sc + context);
    float total = 0.0f;
    int64_t j = 0;
#if IZWI_SIMD_LANES > 0
    simd::Vec sum = simd::zero();
    for (; j + simd::kLanes <= context; j += simd::kLanes) {
      const simd::Vec e = simd::exp(simd::sub(simd::load(sc + j), simd::broadcast(max_score)));
      simd::store(sc + j, e);
      sum = simd::add(sum, e);
    }
    total = simd::reduce_add(sum);
#endif
    for (; j < context; ++j) {
      sc[j] = std::exp(sc[j] - max_score);
      total += sc[j];
    }
    const float inv_total = 1.0f / total;
#pragma omp simd
    for (int64_t j = 0; j < context; ++j) sc[j] *= inv_total;
  }
}

#if IZWI_SIMD_LANES > 0
inline simd::Vec load_kv(const float* p) { return simd::load(p); }
inline simd::Vec load_kv(const uint16_t* p) { return simd::load_bf16(p); }

// Rows per chunk of the value pass over several heads: the chunk's rows stay in L1 or L2 while
// each head's output rows are accumulated over them in registers.
constexpr int64_t kValueChunk = 16;

// Head dims that are NV whole vectors: each key and value row of a head is held in NV registers.
// q, out: the item's kv_heads * group query rows; scores: kv_heads * group rows of `context`.
template <int NV, typename KV>
void attend_simd(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values, int64_t kv_heads,
                 int64_t group, int64_t context, float scale, float* scores, float* out) {
  constexpr int64_t L = simd::kLanes;
  constexpr int64_t D = NV * L;
  // Keys position by position: the item's heads lie side by side in a pool row, one stream.
  for (int64_t j = 0; j < context; ++j) {
    if (j + kPrefetchAhead < context) prefetch_row(keys.at(j + kPrefetchAhead), kv_heads * D);
    const KV* row = keys.at(j);
    for (int64_t i = 0; i < kv_heads; ++i) {
      simd::Vec k[NV];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) k[v] = load_kv(row + i * D + L * v);
      for (int64_t g = 0; g < group; ++g) {
        const float* qg = q + (i * group + g) * D;
        simd::Vec acc = simd::mul(simd::load(qg), k[0]);
#pragma GCC unroll 16
        for (int v = 1; v < NV; ++v) acc = simd::fmadd(simd::load(qg + L * v), k[v], acc);
        scores[(i * group + g) * context + j] = simd::reduce_add(acc) * scale;
      }
    }
  }
  softmax_rows(scores, kv_heads * group, context);
  // Weighted sum of values, a chunk of positions at a time: per head, the output rows of as many
  // query heads as half the registers hold accumulate over the chunk.
  constexpr int64_t kHeads = simd::kRegisters / 2 / NV > 0 ? simd::kRegisters / 2 / NV : 1;
  std::fill(out, out + kv_heads * group * D, 0.0f);
  // One head reads its rows as its own stream: one chunk of all of them (no reloaded accumulators).
  const int64_t chunk = kv_heads == 1 ? context : kValueChunk;
  for (int64_t j0 = 0; j0 < context; j0 += chunk) {
    const int64_t j1 = std::min(context, j0 + chunk);
    for (int64_t i = 0; i < kv_heads; ++i) {
      for (int64_t g0 = 0; g0 < group; g0 += kHeads) {
        const int64_t heads = std::min(kHeads, group - g0);
        float* out_rows = out + (i * group + g0) * D;
        const float* p_rows = scores + (i * group + g0) * context;
        simd::Vec acc[kHeads][NV];
#pragma GCC unroll 16
        for (int64_t h = 0; h < kHeads; ++h) {
          if (h >= heads) break;
#pragma GCC unroll 16
          for (int v = 0; v < NV; ++v) acc[h][v] = simd::load(out_rows + h * D + L * v);
        }
        const bool first_pass = i == 0 && g0 == 0;
        for (int64_t j = j0; j < j1; ++j) {
          // Whole rows (all the item's heads), ahead of the first pass over them.
          if (first_pass && j + kPrefetchAhead < context) prefetch_row(values.at(j + kPrefetchAhead), kv_heads * D);
          const KV* row = values.at(j) + i * D;
          simd::Vec val[NV];
#pragma GCC unroll 16
          for (int v = 0; v < NV; ++v) val[v] = load_kv(row + L * v);
#pragma GCC unroll 16
          for (int64_t h = 0; h < kHeads; ++h) {
            if (h >= heads) break;
            const simd::Vec p = simd::broadcast(p_rows[h * context + j]);
#pragma GCC unroll 16
            for (int v = 0; v < NV; ++v) acc[h][v] = simd::fmadd(p, val[v], acc[h][v]);
          }
        }
        for (int64_t h = 0; h < heads; ++h) {
          for (int v = 0; v < NV; ++v) simd::store(out_rows + h * D + L * v, acc[h][v]);
        }
      }
    }
  }
}

// The vector kernel for head dims of 1, 2, 4, 8 or 16 whole vectors; false for any other.
template <typename KV>
bool attend_vectorised(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values, int64_t kv_heads,
                       int64_t group, int64_t context, int64_t D, float scale, float* scores, float* out) {
  if (D % simd::kLanes != 0) return false;
  switch (D / simd::kLanes) {
    case 1:
      attend_simd<1, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 2:
      attend_simd<2, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 4:
      attend_simd<4, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 8:
      attend_simd<8, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 16:
      attend_simd<16, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    default:
      return false;
  }
}
#endif

// Any head dim: plain loops the compiler vectorises where it can.
template <typename KV>
void attend_generic(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values, int64_t group,
                    int64_t context, int64_t D, float scale, float* scores, float* out) {
  for (int64_t j = 0; j < context; ++j) {
    const KV* k = keys.at(j);
    for (int64_t g = 0; g < group; ++g) {
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t d = 0; d < D; ++d) sum += q[g * D + d] * to_float(k[d]);
      scores[g * context + j] = sum * scale;
    }
  }
  softmax_rows(scores, group, context);
  std::fill(out, out + group * D, 0.0f);
  for (int64_t j = 0; j < context; ++j) {
    const KV* v = values.at(j);
    for (int64_t g = 0; g < group; ++g) {
      const float p = scores[g * context + j];
#pragma omp simd
      for (int64_t d = 0; d < D; ++d) out[g * D + d] += p * to_float(v[d]);
    }
  }
}

template <typename KV>
void attend_paged(const float* q, const KV* key_pool, const KV* value_pool, float* out,
                  const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale) {
  const int64_t H = shape.num_heads, KVH = shape.num_kv_heads, D = shape.head_dim, BS = shape.block_size;
  const int64_t group = H / KVH;
  int64_t max_context = 0, decode_rows = 0;
  for (const SeqSlice& s : seqs) {
    max_context = std::max(max_context, s.start_pos + s.length);
    if (s.length == 1) ++decode_rows;
  }
  // A decode row takes all KV heads in one item once there are rows enough to share among the
  // threads: its keys and values are then read as whole pool rows, one stream, instead of each
  // head's short piece of every row (a stride the hardware prefetchers follow poorly from DRAM).
  const bool whole_rows = decode_rows >= 4 * static_cast<int64_t>(at::get_num_threads());
  std::vector<WorkItem> work;
  for (const SeqSlice& s : seqs) {
    if (whole_rows && s.length == 1) {
      work.push_back({&s, 0, KVH, 0});
      continue;
    }
    // A thread takes consecutive items: the rows of one KV head in turn, so a prefill chunk's
    // rows reread that head's keys and values from L2 (a 512-position head is 512 KiB in
    // float32), instead of every row going to L3 for each head in turn.
    for (int64_t kvh = 0; kvh < KVH; ++kvh) {
      for (int64_t row = 0; row < s.length; ++row) work.push_back({&s, kvh, 1, row});
    }
  }

  at::parallel_for(0, static_cast<int64_t>(work.size()), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(H * max_context));
    for (int64_t w = begin; w < end; ++w) {
      const WorkItem& item = work[w];
      const SeqSlice& s = *item.seq;
      const int64_t visible_end = s.start_pos + item.row + 1;
      const int64_t first = shape.sliding_window > 0 ? std::max<int64_t>(0, visible_end - shape.sliding_window) : 0;
      const int64_t context = visible_end - first;
      const int64_t token = s.offset + item.row;
      const float* q_rows = q + (token * H + item.kv_head * group) * D;
      float* out_rows = out + (token * H + item.kv_head * group) * D;
      const PagedRows<KV> keys{key_pool, s.block_table->data(), BS, KVH * D, item.kv_head * D, first};
      const PagedRows<KV> values{value_pool, s.block_table->data(), BS, KVH * D, item.kv_head * D, first};
#if IZWI_SIMD_LANES > 0
      if (attend_vectorised(q_rows, keys, values, item.kv_heads, group, context, D, scale, scores.data(), out_rows))
        continue;
#endif
      for (int64_t i = 0; i < item.kv_heads; ++i) {
        PagedRows<KV> head_keys = keys, head_values = values;
        head_keys.head_offset += i * D;
        head_values.head_offset += i * D;
        attend_generic(q_rows + i * group * D, head_keys, head_values, group, context, D, scale, scores.data(),
                       out_rows + i * group * D);
      }
    }
  });
}

}  // namespace

void paged_attention_cpu(const float* q, const float* key_pool, const float* value_pool, float* out,
                         const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale) {
  attend_paged(q, key_pool, value_pool, out, seqs, shape, scale);
}

void paged_attention_cpu(const float* q, const uint16_t* key_pool, const uint16_t* value_pool, float* out,
                         const std::vector<SeqSlice>& seqs, const PagedAttentionShape& shape, float scale) {
  attend_paged(q, key_pool, value_pool, out, seqs, shape, scale);
}

}  // namespace izwi
