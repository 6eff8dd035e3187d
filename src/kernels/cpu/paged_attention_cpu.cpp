#include "kernels/cpu/paged_attention_cpu.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_ps, GCC bug 105593) wherever the
// reductions are inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <utility>

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

// Query rows scored together against four keys: 4 accumulators and one query vector each, plus
// the key vector, in the registers.
constexpr int kScoreRows = (simd::kRegisters - 1) / 5;

// The scores of G query rows q (D apart) against the keys at rows[0 .. count), scaled, into
// scores[g * context + p] (rows past count repeat a valid one and are not stored). The four dot
// products of a row accumulate side by side and are summed together at the end: scored one key at
// a time, each score was a chain of dependent FMAs and a horizontal sum of its own, and the sums
// were a third of a cached prefill's attention.
template <int NV, int G, typename KV>
void score_four(const float* q, const KV* const (&rows)[4], int64_t count, float scale, float* scores,
                int64_t context) {
  constexpr int64_t L = simd::kLanes;
  constexpr int64_t D = NV * L;
  simd::Vec acc[G][4];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) acc[g][p] = simd::zero();
  }
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) {
    simd::Vec qv[G];
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) qv[g] = simd::load(q + g * D + L * v);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const simd::Vec k = load_kv(rows[p] + L * v);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) acc[g][p] = simd::fmadd(qv[g], k, acc[g][p]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    float sums[4];
    simd::reduce_add4(acc[g], sums);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      if (p < count) scores[g * context + p] = sums[p] * scale;
    }
  }
}

// score_four for `query_rows` (1 .. kScoreRows) query rows.
template <int NV, typename KV, int... G>
void score_four_rows(int64_t query_rows, const float* q, const KV* const (&rows)[4], int64_t count, float scale,
                     float* scores, int64_t context, std::integer_sequence<int, G...> /*counts*/) {
  ((query_rows == G + 1 ? score_four<NV, G + 1>(q, rows, count, scale, scores, context) : void()), ...);
}

// Query rows that share a value pass at most, and the registers their accumulators may take (the
// rest hold the broadcast weight and a value vector).
constexpr int kValueRows = 8;
constexpr int kValueRegisters = simd::kRegisters - 2;

// Vectors of the head dim (a power of two up to nv) that `rows` query rows accumulate in one pass.
int64_t slab_vectors(int64_t nv, int64_t rows) {
  int64_t slab = nv;
  while (slab > 1 && slab * rows > kValueRegisters) slab /= 2;
  return slab;
}

// One value pass of a head: out[r * D + ...] (+)= sum over positions j < context of
// p[r * context + j] times the slab at `offset` in the head's value row at j.
template <typename KV>
struct ValuePass {
  const PagedRows<KV>& values;
  int64_t offset;
  const float* p;
  int64_t context;
  float* out;
  int64_t D;
  bool prefetch;  ///< prefetch the head's rows ahead (the first pass over them)
};

template <int S, int R, typename KV>
void value_slab(const ValuePass<KV>& pass) {
  constexpr int64_t L = simd::kLanes;
  simd::Vec acc[R][S];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < S; ++v) acc[r][v] = simd::load(pass.out + r * pass.D + L * v);
  }
  for (int64_t j = 0; j < pass.context; ++j) {
    if (pass.prefetch && j + kPrefetchAhead < pass.context) prefetch_row(pass.values.at(j + kPrefetchAhead), pass.D);
    const KV* row = pass.values.at(j) + pass.offset;
    simd::Vec val[S];
#pragma GCC unroll 16
    for (int v = 0; v < S; ++v) val[v] = load_kv(row + L * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const simd::Vec p = simd::broadcast(pass.p[r * pass.context + j]);
#pragma GCC unroll 16
      for (int v = 0; v < S; ++v) acc[r][v] = simd::fmadd(p, val[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < S; ++v) simd::store(pass.out + r * pass.D + L * v, acc[r][v]);
  }
}

// value_slab for `rows` (1 .. kValueRows) query rows and slabs of S vectors; only the pairs whose
// accumulators fit the registers are compiled (slab_vectors never asks for the others).
template <int S, typename KV, int... R>
void value_slab_rows(int64_t rows, const ValuePass<KV>& pass, std::integer_sequence<int, R...> /*counts*/) {
  const auto run = [&](auto r) {
    if constexpr (decltype(r)::value * S <= kValueRegisters) {
      if (rows == decltype(r)::value) value_slab<S, decltype(r)::value>(pass);
    }
  };
  (run(std::integral_constant<int, R + 1>{}), ...);
}

// value_slab_rows for slabs of `slab` = 2^k vectors (k < sizeof...(K), 1 .. 16).
template <typename KV, int... K>
void value_pass(int64_t slab, int64_t rows, const ValuePass<KV>& pass, std::integer_sequence<int, K...> /*powers*/) {
  ((slab == (1 << K) ? value_slab_rows<(1 << K)>(rows, pass, std::make_integer_sequence<int, kValueRows>{}) : void()),
   ...);
}

// Decode rows of all KV heads, for head dims of NV whole vectors: each key and value row of a head
// is held in NV registers. q, out: the item's kv_heads * group query rows; scores: kv_heads * group
// rows of `context`. Their rows come from DRAM and are read front to back, one position at a time:
// scored four positions at a time, head by head (score_four), 64 sequences of the 100m preset
// attended 1.3-1.7x slower (BM_PagedAttentionDecode/64/256).
template <int NV, typename KV>
[[gnu::noinline]] void attend_whole_rows(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values,
                                         int64_t kv_heads, int64_t group, int64_t context, float scale, float* scores,
                                         float* out) {
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
  for (int64_t j0 = 0; j0 < context; j0 += kValueChunk) {
    const int64_t j1 = std::min(context, j0 + kValueChunk);
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

// One KV head's query rows (prefill rows, small decode batches), for head dims of NV whole vectors:
// the keys four positions at a time (score_four), the values in slabs (value_pass). q, out: the
// item's group query rows; scores: group rows of `context`.
template <int NV, typename KV>
[[gnu::noinline]] void attend_one_head(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values,
                                       int64_t group, int64_t context, float scale, float* scores, float* out) {
  constexpr int64_t L = simd::kLanes;
  constexpr int64_t D = NV * L;
  for (int64_t j = 0; j < context; j += 4) {
    const int64_t count = std::min<int64_t>(4, context - j);
    for (int64_t a = j + kPrefetchAhead; a < std::min(context, j + kPrefetchAhead + 4); ++a) {
      prefetch_row(keys.at(a), D);
    }
    const KV* const rows[4] = {keys.at(j), keys.at(j + std::min<int64_t>(1, count - 1)),
                               keys.at(j + std::min<int64_t>(2, count - 1)), keys.at(j + count - 1)};
    for (int64_t g0 = 0; g0 < group; g0 += kScoreRows) {
      score_four_rows<NV>(std::min<int64_t>(kScoreRows, group - g0), q + g0 * D, rows, count, scale,
                          scores + g0 * context + j, context, std::make_integer_sequence<int, kScoreRows>{});
    }
  }
  softmax_rows(scores, group, context);
  std::fill(out, out + group * D, 0.0f);
  const int64_t rows_per_pass = std::min<int64_t>(group, kValueRows);
  for (int64_t g0 = 0; g0 < group; g0 += rows_per_pass) {
    const int64_t rows = std::min(rows_per_pass, group - g0);
    const int64_t slab = slab_vectors(NV, rows);
    for (int64_t v0 = 0; v0 < NV; v0 += slab) {
      value_pass(
          slab, rows,
          ValuePass<KV>{values, v0 * L, scores + g0 * context, context, out + g0 * D + v0 * L, D, g0 == 0 && v0 == 0},
          std::make_integer_sequence<int, 5>{});
    }
  }
}

// One head's items and whole-row items go their own ways (attend_one_head, attend_whole_rows), each
// compiled on its own: inlined together into the work loop, the whole-row kernel took about 7%
// longer per 64-request decode step of the 100m preset in izwi-bench (five alternating pairs).
template <int NV, typename KV>
void attend_head_dim(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values, int64_t kv_heads,
                     int64_t group, int64_t context, float scale, float* scores, float* out) {
  if (kv_heads == 1) {
    attend_one_head<NV, KV>(q, keys, values, group, context, scale, scores, out);
  } else {
    attend_whole_rows<NV, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
  }
}

// The vector kernel for head dims of 1, 2, 4, 8 or 16 whole vectors; false for any other.
template <typename KV>
bool attend_vectorised(const float* q, const PagedRows<KV>& keys, const PagedRows<KV>& values, int64_t kv_heads,
                       int64_t group, int64_t context, int64_t D, float scale, float* scores, float* out) {
  if (D % simd::kLanes != 0) return false;
  switch (D / simd::kLanes) {
    case 1:
      attend_head_dim<1, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 2:
      attend_head_dim<2, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 4:
      attend_head_dim<4, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 8:
      attend_head_dim<8, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
      return true;
    case 16:
      attend_head_dim<16, KV>(q, keys, values, kv_heads, group, context, scale, scores, out);
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
