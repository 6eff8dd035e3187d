// Paged attention on the GPU against paged_attention_cpu: decode rows and prefill chunks in one
// batch (blocks of several query rows), decode rows alone (blocks of one row), GQA, with and
// without a sliding window, K/V pools in float32, bf16 and f16 (the CPU kernel reads the same
// values widened to float), float32 or bf16 activations (the CPU kernel reads the bf16 q widened;
// a bf16 result is within one bf16 ulp of the CPU's float32 result rounded). Then the split-K
// decode kernel (paged_decode_attention_cuda) the same way, over batches of 1 to 64 sequences whose
// contexts span one to many partitions, blocks in shuffled order.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/backend.h"
#include "kernels/cpu/paged_attention_cpu.h"
#include "kernels/cuda/paged_attention_cuda.h"
#include "kernels/cuda/paged_decode_attention_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::random_floats;

/// Between two float32 results in another summation order, rounded to bf16: the same or the
/// neighbouring value, and float32 differences that cancellation makes large relative to a result
/// near zero.
constexpr float kCancellation = 1e-5f;

struct Case {
  int64_t head_dim;
  int64_t sliding_window;
  KvDtype dtype;
  bool decode_only = false;       ///< One row per sequence (the one-row blocks) instead of prefill chunks too.
  bool bf16_activations = false;  ///< q and out in bf16 instead of float32.
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

// The pool on the device as `dtype` stores it; `seen` gets the values the CPU kernel reads of it.
std::shared_ptr<void> device_pool(const std::vector<float>& pool, KvDtype dtype, std::vector<float>& seen) {
  seen = pool;
  if (dtype == KvDtype::Float32) {
    auto buffer = std::make_shared<DeviceBuffer<float>>(pool);
    return std::shared_ptr<void>(buffer, buffer->get());
  }
  if (dtype == KvDtype::BFloat16) {
    auto buffer = std::make_shared<DeviceBuffer<__nv_bfloat16>>(narrow<__nv_bfloat16>(pool, seen));
    return std::shared_ptr<void>(buffer, buffer->get());
  }
  auto buffer = std::make_shared<DeviceBuffer<__half>>(narrow<__half>(pool, seen));
  return std::shared_ptr<void>(buffer, buffer->get());
}

// A step's sequences and their block tables ([seqs, table_stride], -1 past a sequence's blocks).
struct Step {
  int64_t num_heads, num_kv_heads, head_dim, block_size, sliding_window;
  std::vector<DeviceSeq> seqs;
  int64_t table_stride;
  std::vector<int32_t> tables;
};

// Random q and pools for the step, `launch` on the device, the result against paged_attention_cpu
// over the values the device holds (pools narrowed, a bf16 q rounded).
template <typename Launch>
void check_step(const Step& st, KvDtype dtype, bool bf16_activations, const Launch& launch) {
  const int64_t H = st.num_heads, KVH = st.num_kv_heads, D = st.head_dim, BS = st.block_size;
  int64_t tokens = 0, max_length = 0;
  for (const DeviceSeq& s : st.seqs) {
    tokens = std::max(tokens, s.offset + s.length);
    max_length = std::max(max_length, s.length);
  }
  const int64_t blocks = *std::max_element(st.tables.begin(), st.tables.end()) + 1;
  std::vector<float> q = random_floats(tokens * H * D, 10);
  const std::vector<uint16_t> q_bits = cuda_test::to_bf16(q);
  if (bf16_activations) q = cuda_test::from_bf16(q_bits);
  std::vector<float> k_seen, v_seen;
  const std::shared_ptr<void> d_k = device_pool(random_floats(blocks * BS * KVH * D, 11, -2.0f, 2.0f), dtype, k_seen);
  const std::shared_ptr<void> d_v = device_pool(random_floats(blocks * BS * KVH * D, 12), dtype, v_seen);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  DeviceBuffer<float> d_q(q), d_out(tokens * H * D);
  DeviceBuffer<uint16_t> d_q16(q_bits), d_out16(tokens * H * D);
  DeviceBuffer<DeviceSeq> d_seqs(st.seqs);
  DeviceBuffer<int32_t> d_tables(st.tables);
  PagedAttentionCudaArgs args{};
  args.q = bf16_activations ? static_cast<const void*>(d_q16.get()) : d_q.get();
  args.key_pool = d_k.get();
  args.value_pool = d_v.get();
  args.out = bf16_activations ? static_cast<void*>(d_out16.get()) : d_out.get();
  args.kv_dtype = dtype;
  args.activation_dtype = bf16_activations ? ElementDtype::BFloat16 : ElementDtype::Float32;
  args.seqs = d_seqs.get();
  args.block_tables = d_tables.get();
  args.num_seqs = static_cast<int32_t>(st.seqs.size());
  args.table_stride = st.table_stride;
  args.max_length = max_length;
  args.num_heads = H;
  args.num_kv_heads = KVH;
  args.head_dim = D;
  args.block_size = BS;
  args.sliding_window = st.sliding_window;
  args.scale = scale;
  launch(args);
  const std::vector<float> out_gpu = bf16_activations ? cuda_test::from_bf16(d_out16.to_host()) : d_out.to_host();

  std::vector<std::vector<int32_t>> cpu_tables(st.seqs.size());
  std::vector<SeqSlice> slices(st.seqs.size());
  for (size_t i = 0; i < st.seqs.size(); ++i) {
    cpu_tables[i].assign(st.tables.begin() + i * st.table_stride, st.tables.begin() + (i + 1) * st.table_stride);
    slices[i].offset = st.seqs[i].offset;
    slices[i].length = st.seqs[i].length;
    slices[i].start_pos = st.seqs[i].start_pos;
    slices[i].block_table = &cpu_tables[i];
  }
  std::vector<float> expected(tokens * H * D);
  paged_attention_cpu(q.data(), k_seen.data(), v_seen.data(), expected.data(), slices,
                      PagedAttentionShape{H, KVH, D, BS, st.sliding_window}, scale);
  if (bf16_activations) {
    cuda_test::expect_within_ulps(out_gpu, cuda_test::round_bf16(expected), cuda_test::kBf16Mantissa, 1.0f,
                                  kCancellation);
  } else {
    expect_close(out_gpu, expected, 2e-5f);
  }
}

void run_case(const Case& c) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t max_blocks = 20;
  Step st{16, 4, c.head_dim, 16, c.sliding_window, {}, max_blocks, {}};
  // A prefill chunk resuming at 40, two decode rows (one past several blocks), a fresh prompt of a
  // length that leaves the last block of rows partly empty; or decode rows only.
  st.seqs =
      c.decode_only
          ? std::vector<DeviceSeq>{{0, 1, 40, -1, 0}, {1, 1, 200, -1, 0}, {2, 1, 3, -1, 0}, {3, 1, 0, -1, 0}}
          : std::vector<DeviceSeq>{{0, 24, 40, -1, 0}, {24, 1, 200, -1, 0}, {25, 1, 3, -1, 0}, {26, 30, 0, -1, 0}};
  st.tables.resize(st.seqs.size() * max_blocks);
  std::iota(st.tables.begin(), st.tables.end(), 0);
  std::reverse(st.tables.begin(), st.tables.end());  // blocks out of order, as after reuse
  check_step(st, c.dtype, c.bf16_activations,
             [](const PagedAttentionCudaArgs& args) { paged_attention_cuda(args, nullptr); });
}

TEST(PagedAttentionCuda, Float32MatchesCpu) { run_case({128, 0, KvDtype::Float32}); }
TEST(PagedAttentionCuda, SlidingWindowMatchesCpu) { run_case({64, 37, KvDtype::Float32}); }
TEST(PagedAttentionCuda, BFloat16PoolMatchesCpu) { run_case({128, 0, KvDtype::BFloat16}); }
TEST(PagedAttentionCuda, Float16PoolMatchesCpu) { run_case({128, 0, KvDtype::Float16}); }
TEST(PagedAttentionCuda, OddHeadDimMatchesCpu) { run_case({80, 0, KvDtype::Float32}); }
TEST(PagedAttentionCuda, DecodeRowsMatchCpu) { run_case({128, 0, KvDtype::BFloat16, true}); }
TEST(PagedAttentionCuda, DecodeRowsInAWindowMatchCpu) { run_case({64, 16, KvDtype::Float32, true}); }
TEST(PagedAttentionCuda, BFloat16ActivationsMatchCpu) { run_case({128, 0, KvDtype::BFloat16, false, true}); }
TEST(PagedAttentionCuda, BFloat16ActivationsInAWindowMatchCpu) { run_case({64, 37, KvDtype::Float16, false, true}); }
// 8 rows of 4 heads of 256 (and of 192): 72 KiB (56 KiB) of shared memory, past the 48 KiB a
// launch gets without opting in through cudaFuncSetAttribute.
TEST(PagedAttentionCuda, SharedMemoryPast48KiB) {
  run_case({256, 0, KvDtype::Float32});
  run_case({192, 0, KvDtype::BFloat16, false, true});
}

// Split-K decode attention.

const std::vector<int64_t> kContexts{1, 17, 255, 256, 257, 1000, 4100};

// num_seqs decode rows whose contexts (the keys each sees, its new one included) cycle through
// `contexts`, 2 KV heads of `group` query heads, blocks of 16 keys drawn from a shuffled pool, and
// tables padded with -1 to a power-of-two width as a decode graph's bucket stages them (so
// table_stride * block_size bounds the context loosely and the kernel meets empty partitions).
Step decode_step(int64_t num_seqs, const std::vector<int64_t>& contexts, int64_t group, int64_t head_dim,
                 int64_t sliding_window) {
  const int64_t BS = 16;
  Step st{2 * group, 2, head_dim, BS, sliding_window, {}, 1, {}};
  std::vector<int64_t> blocks_of(num_seqs);
  int64_t total = 0;
  for (int64_t i = 0; i < num_seqs; ++i) {
    const int64_t context = contexts[i % contexts.size()];
    st.seqs.push_back(DeviceSeq{i, 1, context - 1, -1, 0});
    blocks_of[i] = (context + BS - 1) / BS;
    total += blocks_of[i];
    while (st.table_stride < blocks_of[i]) st.table_stride *= 2;
  }
  std::vector<int32_t> pool_blocks(total);
  std::iota(pool_blocks.begin(), pool_blocks.end(), 0);
  std::shuffle(pool_blocks.begin(), pool_blocks.end(), std::mt19937(7));
  st.tables.assign(num_seqs * st.table_stride, -1);
  int64_t next = 0;
  for (int64_t i = 0; i < num_seqs; ++i) {
    for (int64_t b = 0; b < blocks_of[i]; ++b) st.tables[i * st.table_stride + b] = pool_blocks[next++];
  }
  return st;
}

// The plan for `multiprocessors` (0: this device's; 1 gives the largest partitions, a huge count
// the smallest), the workspace filled with NaN so a slot the reduce reads unwritten shows.
void launch_decode(const PagedAttentionCudaArgs& args, int multiprocessors) {
  ASSERT_TRUE(paged_decode_attention_applies(args));
  const PagedDecodePlan plan =
      plan_paged_decode_attention(args, multiprocessors > 0 ? multiprocessors : cuda_multiprocessor_count());
  DeviceBuffer<float> workspace(std::vector<float>(plan.workspace_floats, std::nanf("")));
  paged_decode_attention_cuda(args, plan, workspace.get(), nullptr);
  cuda_test::check(cudaDeviceSynchronize(), "paged_decode_attention_cuda");
}

struct DecodeCase {
  int64_t num_seqs;
  int64_t group;
  int64_t head_dim;
  KvDtype dtype;
  bool bf16_activations;
  int64_t sliding_window = 0;
  int multiprocessors = 0;
};

void run_decode(const DecodeCase& c, const std::vector<int64_t>& contexts = kContexts) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  check_step(decode_step(c.num_seqs, contexts, c.group, c.head_dim, c.sliding_window), c.dtype, c.bf16_activations,
             [&](const PagedAttentionCudaArgs& args) { launch_decode(args, c.multiprocessors); });
}

constexpr int kSmallestPartitions = 1 << 20;

TEST(PagedDecodeAttentionCuda, BatchOneAtEachContext) {
  for (const int64_t context : kContexts) {
    SCOPED_TRACE(testing::Message() << "context " << context);
    run_decode({1, 4, 64, KvDtype::BFloat16, true}, {context});
    run_decode({1, 8, 128, KvDtype::Float32, false}, {context});
  }
}
TEST(PagedDecodeAttentionCuda, Batch64Bf16) { run_decode({64, 4, 64, KvDtype::BFloat16, true}); }
TEST(PagedDecodeAttentionCuda, Batch64Float32) { run_decode({64, 8, 128, KvDtype::Float32, false}); }
TEST(PagedDecodeAttentionCuda, Group1Float16Pool) { run_decode({7, 1, 128, KvDtype::Float16, false}); }
TEST(PagedDecodeAttentionCuda, Group8Bf16PoolBf16Activations) { run_decode({7, 8, 128, KvDtype::BFloat16, true}); }
TEST(PagedDecodeAttentionCuda, HeadDim64Float16PoolBf16Activations) { run_decode({3, 4, 64, KvDtype::Float16, true}); }
// 16 query heads per KV head: two blocks of 8 per partition.
TEST(PagedDecodeAttentionCuda, Group16SplitsAcrossBlocks) { run_decode({5, 16, 64, KvDtype::Float32, true}); }
// Rows whose packs end short of 16 bytes (80 floats: 20 packs over 16 threads) or whose rows are not
// 16-byte aligned at all (100 bf16: element loads).
TEST(PagedDecodeAttentionCuda, OddHeadDims) {
  run_decode({7, 4, 80, KvDtype::Float32, false});
  run_decode({7, 4, 100, KvDtype::BFloat16, true});
}
// The largest head the plan takes (kPagedDecodeMaxHeadDim): two 16-byte packs of floats per thread.
TEST(PagedDecodeAttentionCuda, LargestHeadDim) {
  run_decode({5, 4, 256, KvDtype::Float32, false});
  run_decode({5, 2, 256, KvDtype::BFloat16, true});
}
TEST(PagedDecodeAttentionCuda, SlidingWindow) {
  run_decode({7, 4, 128, KvDtype::Float32, false, 300});
  run_decode({7, 4, 64, KvDtype::BFloat16, true, 64});
}
TEST(PagedDecodeAttentionCuda, SmallestPartitions) {
  run_decode({7, 4, 128, KvDtype::BFloat16, true, 0, kSmallestPartitions});
  run_decode({7, 4, 64, KvDtype::Float16, false, 100, kSmallestPartitions});  // a window over partitions
}
TEST(PagedDecodeAttentionCuda, LargestPartitions) {
  run_decode({7, 4, 128, KvDtype::Float32, false, 0, 1});
  // Contexts within one partition of 512 keys: the kernel writes the output itself, no reduce.
  run_decode({7, 4, 128, KvDtype::BFloat16, true, 0, 1}, {1, 17, 255, 256, 257});
  run_decode({7, 4, 64, KvDtype::Float32, false, 100, 1}, {1, 17, 255, 256, 257});
}

// ops::paged_attention plans split-K by the Backend's count, read once, not by a query per call.
TEST(PagedDecodeAttentionCuda, BackendHoldsTheDevicesMultiprocessorCount) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  if (!at::hasCUDA()) GTEST_SKIP() << "libtorch without CUDA (the CUDA emulator runs the kernels alone)";
  BackendOptions options;
  options.device = "cuda";
  const Backend backend(options);
  ASSERT_TRUE(backend.cuda_kernels());
  EXPECT_GT(backend.cuda_multiprocessors(), 0);
  EXPECT_EQ(backend.cuda_multiprocessors(), cuda_multiprocessor_count());
  EXPECT_EQ(Backend::host().cuda_multiprocessors(), 0);
}

TEST(PagedDecodeAttentionCuda, RejectsChunkedPrefillSteps) {
  // Checked before the device is touched: the pointers are never read.
  PagedAttentionCudaArgs args{};
  args.num_seqs = 1;
  args.table_stride = 4;
  args.max_length = 2;
  args.num_heads = 8;
  args.num_kv_heads = 2;
  args.head_dim = 64;
  args.block_size = 16;
  EXPECT_FALSE(paged_decode_attention_applies(args));
  const PagedDecodePlan plan = plan_paged_decode_attention(args, 132);
  float workspace = 0.0f;
  EXPECT_THROW(paged_decode_attention_cuda(args, plan, &workspace, nullptr), std::invalid_argument);
  args.max_length = 1;
  args.head_dim = 512;
  EXPECT_FALSE(paged_decode_attention_applies(args));
}

}  // namespace
}  // namespace izwi
