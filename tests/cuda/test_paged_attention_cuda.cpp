// Paged attention on the GPU against paged_attention_cpu: decode rows and prefill chunks in one
// batch (blocks of several query rows), decode rows alone (blocks of one row), GQA, with and
// without a sliding window, K/V pools in float32, bf16 and f16 (the CPU kernel reads the same
// values widened to float).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "cuda/cuda_test_util.h"
#include "kernels/cpu/paged_attention_cpu.h"
#include "kernels/cuda/paged_attention_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::random_floats;

struct Case {
  int64_t head_dim;
  int64_t sliding_window;
  KvDtype dtype;
  bool decode_only = false;  ///< One row per sequence (the one-row blocks) instead of prefill chunks too.
};

// The pool as stored on the device, and the float values the CPU kernel should see.
template <typename T>
std::vector<T> narrow(const std::vector<float>& pool, std::vector<float>& widened) {
  std::vector<T> stored(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      stored[i] = __float2bfloat16(pool[i]);
      widened[i] = __bfloat162float(stored[i]);
    } else {
      stored[i] = __float2half(pool[i]);
      widened[i] = __half2float(stored[i]);
    }
  }
  return stored;
}

void run_case(const Case& c) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t H = 16, KVH = 4, D = c.head_dim, BS = 16, max_blocks = 20;
  // A prefill chunk resuming at 40, two decode rows (one past several blocks), a fresh prompt of a
  // length that leaves the last block of rows partly empty; or decode rows only.
  const std::vector<DeviceSeq> seqs = c.decode_only
                                          ? std::vector<DeviceSeq>{{0, 1, 40}, {1, 1, 200}, {2, 1, 3}, {3, 1, 0}}
                                          : std::vector<DeviceSeq>{{0, 24, 40}, {24, 1, 200}, {25, 1, 3}, {26, 30, 0}};
  const int64_t tokens = seqs.back().offset + seqs.back().length;
  int64_t max_length = 0;
  for (const DeviceSeq& s : seqs) max_length = std::max(max_length, s.length);
  std::vector<int32_t> tables(seqs.size() * max_blocks);
  std::iota(tables.begin(), tables.end(), 0);
  std::reverse(tables.begin(), tables.end());  // blocks out of order, as after reuse
  const int64_t blocks = static_cast<int64_t>(tables.size());

  const std::vector<float> q = random_floats(tokens * H * D, 10);
  const std::vector<float> k_pool = random_floats(blocks * BS * KVH * D, 11, -2.0f, 2.0f);
  const std::vector<float> v_pool = random_floats(blocks * BS * KVH * D, 12);
  std::vector<float> k_seen = k_pool, v_seen = v_pool;

  std::vector<std::vector<int32_t>> cpu_tables(seqs.size());
  std::vector<SeqSlice> slices(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    cpu_tables[i].assign(tables.begin() + i * max_blocks, tables.begin() + (i + 1) * max_blocks);
    slices[i].offset = seqs[i].offset;
    slices[i].length = seqs[i].length;
    slices[i].start_pos = seqs[i].start_pos;
    slices[i].block_table = &cpu_tables[i];
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  std::vector<float> out_gpu(tokens * H * D);
  auto run_gpu = [&](const void* k, const void* v) {
    DeviceBuffer<float> d_q(q), d_out(tokens * H * D);
    DeviceBuffer<DeviceSeq> d_seqs(seqs);
    DeviceBuffer<int32_t> d_tables(tables);
    PagedAttentionCudaArgs args{};
    args.q = d_q.get();
    args.key_pool = k;
    args.value_pool = v;
    args.out = d_out.get();
    args.kv_dtype = c.dtype;
    args.seqs = d_seqs.get();
    args.block_tables = d_tables.get();
    args.num_seqs = static_cast<int32_t>(seqs.size());
    args.table_stride = max_blocks;
    args.max_length = max_length;
    args.num_heads = H;
    args.num_kv_heads = KVH;
    args.head_dim = D;
    args.block_size = BS;
    args.sliding_window = c.sliding_window;
    args.scale = scale;
    paged_attention_cuda(args, nullptr);
    out_gpu = d_out.to_host();
  };
  if (c.dtype == KvDtype::Float32) {
    DeviceBuffer<float> d_k(k_pool), d_v(v_pool);
    run_gpu(d_k.get(), d_v.get());
  } else if (c.dtype == KvDtype::BFloat16) {
    DeviceBuffer<__nv_bfloat16> d_k(narrow<__nv_bfloat16>(k_pool, k_seen)), d_v(narrow<__nv_bfloat16>(v_pool, v_seen));
    run_gpu(d_k.get(), d_v.get());
  } else {
    DeviceBuffer<__half> d_k(narrow<__half>(k_pool, k_seen)), d_v(narrow<__half>(v_pool, v_seen));
    run_gpu(d_k.get(), d_v.get());
  }

  std::vector<float> expected(tokens * H * D);
  paged_attention_cpu(q.data(), k_seen.data(), v_seen.data(), expected.data(), slices,
                      PagedAttentionShape{H, KVH, D, BS, c.sliding_window}, scale);
  expect_close(out_gpu, expected, 2e-5f);
}

TEST(PagedAttentionCuda, Float32MatchesCpu) { run_case({128, 0, KvDtype::Float32}); }
TEST(PagedAttentionCuda, SlidingWindowMatchesCpu) { run_case({64, 37, KvDtype::Float32}); }
TEST(PagedAttentionCuda, BFloat16PoolMatchesCpu) { run_case({128, 0, KvDtype::BFloat16}); }
TEST(PagedAttentionCuda, Float16PoolMatchesCpu) { run_case({128, 0, KvDtype::Float16}); }
TEST(PagedAttentionCuda, OddHeadDimMatchesCpu) { run_case({80, 0, KvDtype::Float32}); }
TEST(PagedAttentionCuda, DecodeRowsMatchCpu) { run_case({128, 0, KvDtype::BFloat16, true}); }
TEST(PagedAttentionCuda, DecodeRowsInAWindowMatchCpu) { run_case({64, 16, KvDtype::Float32, true}); }

}  // namespace
}  // namespace izwi
