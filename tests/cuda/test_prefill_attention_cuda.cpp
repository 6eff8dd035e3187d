// Long prefill chunks on the GPU: ops::paged_attention on the Cuda backend routes them through
// prefill_attention (scaled_dot_product_attention: FlashAttention for a chunk from position 0 in
// bf16, a masked kernel after a cached prefix or with a window) and the step's other sequences
// through the paged kernel. Both against the CPU paged kernel on the same values.

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "common/reference.h"
#include "cuda/cuda_test_util.h"
#include "kernels/backend.h"
#include "kernels/ops/paged_attention_op.h"
#include "kernels/ops/prefill_attention_op.h"
#include "layers/step/forward_context.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr int64_t kBlock = 16, kKvHeads = 8, kHeadDim = 64;

struct Case {
  at::ScalarType dtype;
  int64_t group;
  int64_t sliding_window;
};

// A 1,024-token prompt, a decode row, a chunk of 256 after 300 cached, a short chunk of 20 after
// 37, a decode row, a chunk of 64 (the threshold) after 128, over blocks scattered in the pool.
void run_case(const Case& c) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  BackendOptions options;
  options.device = "cuda";
  options.dtype = c.dtype == at::kFloat ? "float32" : "bfloat16";
  const Backend backend(options);
  ASSERT_TRUE(backend.cuda_kernels());

  const std::vector<std::pair<int32_t, int32_t>> shape = {{1024, 0}, {1, 700}, {256, 300}, {20, 37}, {1, 9}, {64, 128}};
  int64_t blocks = 0;
  for (const auto& [length, start] : shape) blocks += (start + length + kBlock - 1) / kBlock;
  std::vector<int32_t> pool(static_cast<size_t>(blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), std::mt19937(5));
  std::vector<std::vector<int32_t>> tables;
  tables.reserve(shape.size());
  int64_t rows = 0;
  size_t next = 0;
  for (const auto& [length, start] : shape) {
    const size_t n = static_cast<size_t>((start + length + kBlock - 1) / kBlock);
    tables.emplace_back(pool.begin() + next, pool.begin() + next + n);
    next += n;
    rows += length;
  }
  const std::vector<int32_t> ids(static_cast<size_t>(rows), 1);
  StepBatch batch;
  for (size_t i = 0; i < shape.size(); ++i) {
    StepSequence s;
    s.num_tokens = shape[i].first;
    s.start_pos = shape[i].second;
    s.token_ids = ids.data();
    s.block_table = &tables[i];
    batch.seqs.push_back(s);
  }
  const ForwardContext ctx = make_forward_context(batch, kBlock, backend);
  ASSERT_TRUE(ctx.device_seqs.staged());

  at::manual_seed(6);
  const int64_t heads = kKvHeads * c.group;
  const at::Tensor key_pool = at::randn({blocks, kBlock, kKvHeads, kHeadDim}).to(c.dtype);
  const at::Tensor value_pool = at::randn_like(key_pool);
  const at::Tensor q = at::randn({rows, heads, kHeadDim}).to(c.dtype);
  const double scale = 1.0 / 8.0;
  const at::Tensor expected =
      ops::paged_attention(Backend::host(), q.to(at::kFloat), key_pool.to(at::kFloat), value_pool.to(at::kFloat),
                           ctx.seqs, DeviceStepArrays{}, kBlock, scale, c.sliding_window);

  const at::Tensor dq = q.to(at::kCUDA), dk = key_pool.to(at::kCUDA), dv = value_pool.to(at::kCUDA);
  const at::Tensor routed =
      ops::paged_attention(backend, dq, dk, dv, ctx.seqs, ctx.device_seqs, kBlock, scale, c.sliding_window)
          .to(at::kCPU, at::kFloat);
  // prefill_attention alone, on every sequence (the decode rows too: any chunk is valid input).
  at::Tensor direct = at::zeros_like(dq);
  ops::prefill_attention(dq, dk, dv, ctx.seqs, kBlock, scale, c.sliding_window, backend.cuda_sm_version(), direct);
  const at::Tensor direct_host = direct.to(at::kCPU, at::kFloat);

  // bf16: q.k and p.v from bf16 operands on tensor cores (float32 accumulation), p rounded to bf16.
  const double tolerance = c.dtype == at::kFloat ? 1e-4 : 3e-2;
  for (const SeqSlice& s : ctx.seqs) {
    const at::Tensor want = expected.narrow(0, s.offset, s.length);
    EXPECT_LT(max_abs_diff(routed.narrow(0, s.offset, s.length), want), tolerance)
        << c.dtype << " group " << c.group << " window " << c.sliding_window << " sequence at " << s.offset
        << (ops::takes_prefill_attention(s) ? " (prefill_attention)" : " (paged kernel)");
    EXPECT_LT(max_abs_diff(direct_host.narrow(0, s.offset, s.length), want), tolerance)
        << c.dtype << " group " << c.group << " window " << c.sliding_window << " sequence at " << s.offset;
  }
}

TEST(PrefillAttentionCuda, Bf16MatchesTheCpuKernel) {
  for (const int64_t group : {1, 2, 4}) run_case({at::kBFloat16, group, 0});
}

TEST(PrefillAttentionCuda, Bf16WithASlidingWindowMatchesTheCpuKernel) { run_case({at::kBFloat16, 4, 100}); }

TEST(PrefillAttentionCuda, Float32MatchesTheCpuKernel) {
  for (const int64_t group : {1, 4}) run_case({at::kFloat, group, 0});
}

}  // namespace
}  // namespace izwi
