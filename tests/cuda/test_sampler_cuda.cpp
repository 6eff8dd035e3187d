// Device-side sampling against the CPU Sampler. Where no random draw decides (greedy, top-k 1,
// top-p 0, a temperature too small to scale by) the ids must be equal; with draws, every id must come from
// the candidate set the CPU semantics define, a request's draws must depend only on its seed and
// draw index, and the frequencies must follow the softmax.

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "kernels/cuda/sampler_cuda.h"
#include "sampling/sampler.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::random_floats;

constexpr int32_t kVocab = 5003;

// Rows of the same request shape over one set of id lists: history, suppressed, EOS.
struct Batch {
  std::vector<float> logits;
  std::vector<SamplingParamsCuda> params;
  std::vector<int32_t> ids;  // the id lists
  std::vector<int32_t> history, suppressed, eos;

  std::vector<int32_t> sample() const {
    DeviceBuffer<float> d_logits(logits);
    DeviceBuffer<SamplingParamsCuda> d_params(params);
    DeviceBuffer<int32_t> d_ids(ids.empty() ? std::vector<int32_t>{0} : ids);
    const int32_t rows = static_cast<int32_t>(params.size());
    DeviceBuffer<uint32_t> d_workspace(sampler_workspace_bytes(rows, kVocab) / sizeof(uint32_t));
    DeviceBuffer<int32_t> d_out(static_cast<size_t>(rows));
    sample_cuda({d_logits.get(), rows, kVocab, d_params.get(), d_ids.get(), d_workspace.get(), d_out.get()}, nullptr);
    EXPECT_EQ(d_workspace.to_host(), std::vector<uint32_t>(d_workspace.to_host().size(), 0u)) << "workspace not reset";
    return d_out.to_host();
  }
};

Batch make_batch(int32_t rows, const SamplingParamsCuda& base, uint32_t seed, bool ties) {
  Batch b;
  b.logits = random_floats(static_cast<size_t>(rows) * kVocab, seed, -8.0f, 8.0f);
  // bf16-like ties: a coarse grid, so several logits share the k-th value (and the top-p cut).
  if (ties) {
    for (float& l : b.logits) l = std::round(l * 8.0f) / 8.0f;
  }
  b.history = {5, 17, 17, 4000, 5, 99, -1, kVocab + 3};  // repeats and out-of-range ids
  b.suppressed = {1, 2};
  b.eos = {0, 17};
  b.ids = b.history;
  b.ids.insert(b.ids.end(), b.suppressed.begin(), b.suppressed.end());
  b.ids.insert(b.ids.end(), b.eos.begin(), b.eos.end());
  for (int32_t r = 0; r < rows; ++r) {
    SamplingParamsCuda p = base;
    p.history_offset = 0;
    p.history_length = static_cast<int64_t>(b.history.size());
    p.suppressed_offset = p.history_length;
    p.suppressed_length = static_cast<int64_t>(b.suppressed.size());
    p.below_min_offset = p.suppressed_offset + p.suppressed_length;
    p.below_min_length = static_cast<int64_t>(b.eos.size());
    p.draw = static_cast<uint64_t>(r);
    b.params.push_back(p);
  }
  return b;
}

SamplingState cpu_state(const Batch& b, const SamplingParamsCuda& p) {
  SamplingState s;
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.repetition_penalty = p.repetition_penalty;
  s.min_tokens = p.min_tokens;
  s.num_generated = p.num_generated;
  s.suppressed = b.suppressed;
  s.suppressed_below_min = b.eos;
  s.history = &b.history;
  return s;
}

// The ids the CPU Sampler could draw from row r (the processors without the draw).
std::set<int32_t> cpu_candidates(const Batch& b, int32_t r) {
  const SamplingParamsCuda& p = b.params[r];
  std::vector<float> l(b.logits.begin() + static_cast<int64_t>(r) * kVocab,
                       b.logits.begin() + static_cast<int64_t>(r + 1) * kVocab);
  // Repetition penalty, suppression: the CPU sampler at temperature 0 applies them, then argmax;
  // here the same steps by hand.
  std::set<int32_t> seen;
  for (int32_t id : b.history) {
    if (id < 0 || id >= kVocab || !seen.insert(id).second) continue;
    l[id] = l[id] < 0 ? l[id] * p.repetition_penalty : l[id] / p.repetition_penalty;
  }
  for (int32_t id : b.suppressed) l[id] = -INFINITY;
  if (p.num_generated < p.min_tokens) {
    for (int32_t id : b.eos) l[id] = -INFINITY;
  }
  for (float& x : l) x /= p.temperature;
  std::vector<int32_t> order(kVocab);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t c) { return l[a] > l[c] || (l[a] == l[c] && a < c); });
  int32_t keep = kVocab;
  if (p.top_k > 0 && p.top_k < kVocab) {
    const float kth = l[order[p.top_k - 1]];
    keep = static_cast<int32_t>(std::count_if(l.begin(), l.end(), [kth](float x) { return x >= kth; }));
  }
  double total = 0;
  for (int32_t i = 0; i < keep; ++i) total += std::exp(l[order[i]] - l[order[0]]);
  if (p.top_p < 1.0f) {
    // Ties at the cut are all candidates on the GPU (sampler_cuda.h).
    double mass = 0;
    for (int32_t i = 0; i < keep; ++i) {
      mass += std::exp(l[order[i]] - l[order[0]]) / total;
      if (mass >= p.top_p) {
        const float cut = l[order[i]];
        while (i + 1 < keep && l[order[i + 1]] == cut) ++i;
        keep = i + 1;
        break;
      }
    }
  }
  return std::set<int32_t>(order.begin(), order.begin() + keep);
}

TEST(SamplerCuda, GreedyAndTopOneMatchCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const SamplingParamsCuda& base :
       {SamplingParamsCuda{0.0f, 0, 1.0f, 1.3f, 5, 2}, SamplingParamsCuda{0.8f, 1, 1.0f, 1.3f, 5, 2},
        SamplingParamsCuda{1e-39f, 0, 0.9f, 1.0f, 0, 0}, SamplingParamsCuda{0.9f, 0, 0.0f, 1.0f, 0, 0}}) {
    const Batch b = make_batch(16, base, 21, false);  // ties at the maximum would leave top-k 1 a draw
    const std::vector<int32_t> ids = b.sample();
    Sampler sampler;
    for (int32_t r = 0; r < 16; ++r) {
      std::vector<float> row(b.logits.begin() + static_cast<int64_t>(r) * kVocab,
                             b.logits.begin() + static_cast<int64_t>(r + 1) * kVocab);
      SamplingState s = cpu_state(b, b.params[r]);
      EXPECT_EQ(ids[r], sampler.sample(row.data(), kVocab, s)) << "row " << r << " temperature " << base.temperature;
    }
  }
}

TEST(SamplerCuda, DrawsComeFromTheCpuCandidates) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  for (const SamplingParamsCuda& base :
       {SamplingParamsCuda{0.7f, 50, 0.9f, 1.2f, 0, 0}, SamplingParamsCuda{1.0f, 0, 0.5f, 1.0f, 3, 1},
        SamplingParamsCuda{1.3f, 40, 1.0f, 1.1f, 0, 0}}) {
    const Batch b = make_batch(64, base, 22, true);
    const std::vector<int32_t> ids = b.sample();
    for (int32_t r = 0; r < 64; ++r) {
      EXPECT_TRUE(cpu_candidates(b, r).count(ids[r])) << "row " << r << " drew " << ids[r];
    }
  }
}

TEST(SamplerCuda, SeededDrawsRepeatAndFollowTheSoftmax) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  // One small distribution in every row, each row its own draw of one seed.
  const int32_t rows = 4096;
  SamplingParamsCuda base{1.0f, 0, 1.0f, 1.0f, 0, 0};
  base.seed = 1234;
  Batch b = make_batch(rows, base, 23, false);
  const std::vector<float> probs = {0.5f, 0.25f, 0.15f, 0.1f};
  for (int32_t r = 0; r < rows; ++r) {
    float* row = b.logits.data() + static_cast<int64_t>(r) * kVocab;
    std::fill(row, row + kVocab, -INFINITY);
    for (size_t i = 0; i < probs.size(); ++i) row[10 + i] = std::log(probs[i]);
  }
  b.history.clear();
  b.suppressed.clear();
  b.eos.clear();
  for (SamplingParamsCuda& p : b.params) p.history_length = p.suppressed_length = p.below_min_length = 0;

  const std::vector<int32_t> first = b.sample(), again = b.sample();
  EXPECT_EQ(first, again);
  std::vector<int> counts(probs.size(), 0);
  for (int32_t id : first) {
    ASSERT_GE(id, 10);
    ASSERT_LT(id, 14);
    ++counts[id - 10];
  }
  for (size_t i = 0; i < probs.size(); ++i) {
    // 5 standard deviations of a binomial count.
    const double expected = probs[i] * rows, sd = std::sqrt(rows * probs[i] * (1 - probs[i]));
    EXPECT_NEAR(counts[i], expected, 5 * sd) << "id " << 10 + i;
  }
}

// Sampler::sample_rows_on_device on the Cuda backend: the ids stay on the device (int64, no copy
// back) and are the ids sample_rows copies back, greedy and seeded (the same seeds and draw
// indices), with the draw counters advanced alike.
TEST(SamplerCuda, SampleRowsOnDeviceGivesTheIdsOfSampleRows) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  if (!at::hasCUDA()) GTEST_SKIP() << "libtorch without CUDA (the CUDA emulator runs the kernels alone)";
  BackendOptions options;
  options.device = "cuda";
  options.threads = at::get_num_threads();  // as the test binary has it
  const Backend backend(options);
  ASSERT_TRUE(backend.cuda_kernels());
  constexpr int64_t kRows = 6, kColumns = 500;
  const at::Tensor logits = at::randn({kRows, kColumns}, at::TensorOptions().device(at::kCUDA)) * 2;
  std::vector<SamplingState> host(kRows), device(kRows);
  std::vector<SamplingState*> host_rows, device_rows;
  for (int64_t r = 0; r < kRows; ++r) {
    for (SamplingState* s : {&host[r], &device[r]}) {
      s->temperature = r % 3 == 0 ? 0.0f : 0.9f;
      s->top_k = r == 1 ? 30 : 0;
      s->top_p = r == 2 ? 0.7f : 1.0f;
      s->reseed(static_cast<uint64_t>(40 + r));
    }
    host_rows.push_back(&host[r]);
    device_rows.push_back(&device[r]);
  }
  Sampler a, b;
  for (int step = 0; step < 8; ++step) {
    const std::vector<int32_t> expected = a.sample_rows(logits.clone(), host_rows, backend);
    const at::Tensor ids = b.sample_rows_on_device(logits.clone(), device_rows, backend);
    ASSERT_TRUE(ids.is_cuda());
    ASSERT_EQ(ids.scalar_type(), at::kLong);
    const at::Tensor back = ids.cpu();
    for (int64_t r = 0; r < kRows; ++r) {
      EXPECT_EQ(back[r].item<int64_t>(), expected[static_cast<size_t>(r)]) << "row " << r << ", step " << step;
      EXPECT_EQ(device[r].draws, host[r].draws) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace izwi
