#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "izwi/errors.h"
#include "sampling/sampler.h"

namespace izwi {
namespace {

SamplingState greedy() { return SamplingState{}; }

TEST(Sampler, GreedyTakesTheFirstMaximum) {
  Sampler sampler;
  std::vector<float> logits = {0.1f, 2.0f, 2.0f, -1.0f};
  SamplingState s = greedy();
  EXPECT_EQ(sampler.sample(logits.data(), 4, s), 1);
}

// Greedy over a vocabulary of many vector blocks: the first maximum, NaN skipped, as one scan.
TEST(Sampler, GreedyOverALargeVocabularyTakesTheFirstMaximum) {
  Sampler sampler;
  SamplingState s = greedy();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> logits(5003);
    for (float& l : logits) l = normal(rng);
    logits[static_cast<size_t>(trial * 97)] = std::nanf("");
    int32_t expected = 0;
    for (int32_t i = 1; i < 5003; ++i) {
      if (logits[static_cast<size_t>(i)] > logits[static_cast<size_t>(expected)]) expected = i;
    }
    EXPECT_EQ(sampler.sample(logits.data(), 5003, s), expected) << "trial " << trial;
  }
  std::vector<float> tied(5003, -1.0f);
  tied[3100] = tied[4500] = 10.0f;
  tied[3099] = std::nanf("");
  EXPECT_EQ(sampler.sample(tied.data(), 5003, s), 3100);
  std::vector<float> first(5003, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(sampler.sample(first.data(), 5003, s), 0);
}

TEST(Sampler, MinTokensSuppressesEosAndStopIds) {
  Sampler sampler;
  SamplingState s = greedy();
  s.min_tokens = 2;
  s.suppressed_below_min = {2, 3};
  std::vector<float> logits = {0.0f, 1.0f, 5.0f, 4.0f};
  EXPECT_EQ(sampler.sample(logits.data(), 4, s), 1);
  s.num_generated = 2;
  logits = {0.0f, 1.0f, 5.0f, 4.0f};
  EXPECT_EQ(sampler.sample(logits.data(), 4, s), 2);
}

TEST(Sampler, RepetitionPenaltyFollowsHuggingFace) {
  Sampler sampler;
  std::vector<int32_t> history = {0, 0, 1};
  SamplingState s = greedy();
  s.repetition_penalty = 2.0f;
  s.history = &history;
  // Positive logits are divided, negative ones multiplied, each seen id once.
  std::vector<float> logits = {3.0f, -1.0f, 2.0f};
  EXPECT_EQ(sampler.sample(logits.data(), 3, s), 2);
  EXPECT_FLOAT_EQ(logits[0], 1.5f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f);
  EXPECT_FLOAT_EQ(logits[2], 2.0f);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  Sampler sampler;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> logits = {0.5f, 0.1f, 0.7f, 0.69f};
    SamplingState s;
    s.temperature = 1.0f;
    s.top_k = 1;
    s.rng.seed(static_cast<uint64_t>(trial));
    EXPECT_EQ(sampler.sample(logits.data(), 4, s), 2);
    logits = {0.5f, 0.1f, 0.7f, 0.69f};
    SamplingState p;
    p.temperature = 1.0f;
    p.top_p = 0.01f;
    p.rng.seed(static_cast<uint64_t>(trial));
    EXPECT_EQ(sampler.sample(logits.data(), 4, p), 2);
  }
}

TEST(Sampler, TopKKeepsTiesWithTheKthLogit) {
  // transformers' TopKLogitsWarper removes only logits below the k-th: with k = 2 and three equal
  // runners-up, all four survive; the logit below them never does.
  Sampler sampler;
  SamplingState s;
  s.temperature = 1.0f;
  s.top_k = 2;
  s.rng.seed(11);
  std::map<int32_t, int> counts;
  for (int i = 0; i < 4000; ++i) {
    std::vector<float> logits = {1.0f, 0.5f, 0.5f, -3.0f, 0.5f};
    ++counts[sampler.sample(logits.data(), 5, s)];
  }
  for (const int32_t id : {0, 1, 2, 4}) EXPECT_GT(counts[id], 0) << "token " << id;
  EXPECT_EQ(counts[3], 0);
}

TEST(Sampler, SeededSamplingIsReproducible) {
  Sampler sampler;
  auto draw = [&](uint64_t seed) {
    SamplingState s;
    s.temperature = 1.0f;
    s.rng.seed(seed);
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) {
      std::vector<float> logits = {0.0f, 0.5f, 1.0f, 0.2f, -0.3f};
      out.push_back(sampler.sample(logits.data(), 5, s));
    }
    return out;
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
}

TEST(Sampler, TemperatureSamplingMatchesTheSoftmax) {
  Sampler sampler;
  SamplingState s;
  s.temperature = 0.5f;
  s.rng.seed(42);
  const std::vector<float> base = {0.0f, 0.3f, -0.2f};
  std::map<int32_t, int> counts;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    std::vector<float> logits = base;
    ++counts[sampler.sample(logits.data(), 3, s)];
  }
  double z = 0;
  for (float l : base) z += std::exp(l / 0.5);
  for (int32_t id = 0; id < 3; ++id) {
    const double expected = std::exp(base[id] / 0.5) / z;
    EXPECT_NEAR(counts[id] / static_cast<double>(n), expected, 0.01) << "token " << id;
  }
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingTheMass) {
  Sampler sampler;
  SamplingState s;
  s.temperature = 1.0f;
  s.top_p = 0.6f;  // probabilities ~0.64, 0.24, 0.09, 0.03: only the first survives
  s.rng.seed(3);
  for (int i = 0; i < 200; ++i) {
    std::vector<float> logits = {2.0f, 1.0f, 0.0f, -1.0f};
    EXPECT_EQ(sampler.sample(logits.data(), 4, s), 0);
  }
  s.top_p = 0.7f;  // first two survive
  std::map<int32_t, int> counts;
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> logits = {2.0f, 1.0f, 0.0f, -1.0f};
    ++counts[sampler.sample(logits.data(), 4, s)];
  }
  EXPECT_GT(counts[1], 0);
  EXPECT_EQ(counts[2] + counts[3], 0);
}

// Top-p over a vocabulary whose nucleus is wider than the first sorted batch of candidates: the
// kept set is exactly the shortest prefix by logit that reaches the mass, as a full sort gives.
TEST(Sampler, TopPOverALargeVocabularyKeepsExactlyTheNucleus) {
  constexpr int32_t kVocab = 3000;
  std::vector<float> base(kVocab);
  // Rank r (probability proportional to exp(-0.002 r)) at a scattered id; 60% of the mass is in
  // the best ~456.
  for (int32_t r = 0; r < kVocab; ++r) base[static_cast<size_t>(r * 7919 % kVocab)] = -0.002f * static_cast<float>(r);
  std::vector<int32_t> by_rank(kVocab);
  for (int32_t r = 0; r < kVocab; ++r) by_rank[static_cast<size_t>(r)] = r * 7919 % kVocab;
  double total = 0;
  for (float l : base) total += std::exp(static_cast<double>(l));
  int32_t nucleus = 0;
  for (double mass = 0; mass < 0.6 * total; ++nucleus) mass += std::exp(static_cast<double>(base[by_rank[nucleus]]));
  ASSERT_GT(nucleus, 400);
  std::vector<int32_t> rank_of(kVocab);
  for (int32_t r = 0; r < kVocab; ++r) rank_of[static_cast<size_t>(by_rank[static_cast<size_t>(r)])] = r;

  Sampler sampler;
  SamplingState s;
  s.temperature = 1.0f;
  s.top_p = 0.6f;
  s.reseed(5);
  int32_t deepest = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<float> logits = base;
    const int32_t rank = rank_of[static_cast<size_t>(sampler.sample(logits.data(), kVocab, s))];
    ASSERT_LT(rank, nucleus);
    deepest = std::max(deepest, rank);
  }
  EXPECT_GE(deepest, nucleus - 20);  // the whole nucleus is drawn from, past the first 256
}

// Masked ids (-inf, e.g. suppressed ones) weigh exactly 0 in a draw over a large vocabulary,
// whose probabilities come from the vector exp.
TEST(Sampler, MaskedIdsAreNeverDrawn) {
  constexpr int32_t kVocab = 5003;
  std::vector<float> base(kVocab, -std::numeric_limits<float>::infinity());
  base[7] = 0.0f;
  base[4999] = 0.5f;
  Sampler sampler;
  SamplingState s;
  s.temperature = 1.0f;
  s.reseed(11);
  std::map<int32_t, int> counts;
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> logits = base;
    ++counts[sampler.sample(logits.data(), kVocab, s)];
  }
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_GT(counts[7], 0);
  EXPECT_GT(counts[4999], counts[7]);
}

TEST(Sampler, SampleRowsSamplesEachRowWithItsOwnState) {
  // Rows of a step in any dtype, each with its own controls and stream, as sample() one by one.
  const at::Tensor logits = at::randn({3, 50}, at::TensorOptions().dtype(at::kDouble).device(at::kCPU));
  std::vector<SamplingState> batched(3), single(3);
  for (size_t r = 0; r < 3; ++r) {
    for (SamplingState* s : {&batched[r], &single[r]}) {
      s->temperature = r == 0 ? 0.0f : 0.8f;
      s->top_k = r == 2 ? 5 : 0;
      s->reseed(100 + r);
    }
  }
  Sampler sampler;
  for (int step = 0; step < 20; ++step) {
    const std::vector<int32_t> ids =
        sampler.sample_rows(logits, {&batched[0], &batched[1], &batched[2]}, Backend::host());
    ASSERT_EQ(ids.size(), 3u);
    const at::Tensor f = logits.to(at::kFloat);
    for (int64_t r = 0; r < 3; ++r) {
      std::vector<float> row(f[r].data_ptr<float>(), f[r].data_ptr<float>() + 50);
      EXPECT_EQ(ids[static_cast<size_t>(r)], sampler.sample(row.data(), 50, single[static_cast<size_t>(r)]))
          << "row " << r << ", step " << step;
    }
  }
}

// A step's rows are spread over the CPU threads, each with its own scratch: every row still draws
// what it draws alone, whatever its controls, and a state given for two rows draws for them in turn.
TEST(Sampler, SampleRowsOverTheThreadsDrawsWhatEachRowDrawsAlone) {
  // Two threads at least (libtorch starts this process with one), put back afterwards.
  struct Threads {
    int before = at::get_num_threads();
    Threads() { at::set_num_threads(std::max(before, 2)); }
    ~Threads() { at::set_num_threads(before); }
  } threads;
  constexpr int64_t kRows = 64, kVocab = 3000;
  const at::Tensor logits = at::randn({kRows, kVocab}) * 3;
  const std::vector<int32_t> history = {5, 17, 17, 2999, 40};
  std::vector<SamplingState> batched(kRows), single(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    for (SamplingState* s : {&batched[r], &single[r]}) {
      s->temperature = r % 5 == 0 ? 0.0f : 0.9f;
      s->top_k = r % 3 == 1 ? 40 : 0;
      s->top_p = r % 4 == 2 ? 0.8f : 1.0f;
      if (r % 7 == 3) {
        s->repetition_penalty = 1.3f;
        s->history = &history;
      }
      s->reseed(static_cast<uint64_t>(1000 + r));
    }
  }
  std::vector<SamplingState*> rows;
  for (SamplingState& s : batched) rows.push_back(&s);
  Sampler sampler, alone;
  for (int step = 0; step < 5; ++step) {
    // float32 logits on the CPU are sampled in place: a copy each time.
    const std::vector<int32_t> ids = sampler.sample_rows(logits.clone(), rows, Backend::host());
    for (int64_t r = 0; r < kRows; ++r) {
      std::vector<float> row(logits[r].data_ptr<float>(), logits[r].data_ptr<float>() + kVocab);
      EXPECT_EQ(ids[static_cast<size_t>(r)], alone.sample(row.data(), kVocab, single[static_cast<size_t>(r)]))
          << "row " << r << ", step " << step;
    }
  }

  SamplingState shared, replay;
  shared.temperature = replay.temperature = 1.0f;
  shared.reseed(7);
  replay.reseed(7);
  const std::vector<int32_t> ids =
      sampler.sample_rows(logits.narrow(0, 0, 2).clone(), {&shared, &shared}, Backend::host());
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<float> row(logits[r].data_ptr<float>(), logits[r].data_ptr<float>() + kVocab);
    EXPECT_EQ(ids[static_cast<size_t>(r)], alone.sample(row.data(), kVocab, replay)) << "shared state, row " << r;
  }
}

// The device-ids form is the host form without the copy back: the same ids, as an int64 tensor
// where the logits are, and the states left where the host form leaves them (greedy rows, seeded
// draws with top-k / top-p, a repetition penalty from the history).
TEST(Sampler, SampleRowsOnDeviceDrawsTheIdsOfSampleRows) {
  constexpr int64_t kRows = 6, kVocab = 700;
  const at::Tensor logits = at::randn({kRows, kVocab}) * 2;
  const std::vector<int32_t> history = {3, 9, 9, 650};
  std::vector<SamplingState> host(kRows), device(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    for (SamplingState* s : {&host[r], &device[r]}) {
      s->temperature = r % 3 == 0 ? 0.0f : 0.9f;
      s->top_k = r == 1 ? 30 : 0;
      s->top_p = r == 2 ? 0.7f : 1.0f;
      if (r == 4) {
        s->repetition_penalty = 1.4f;
        s->history = &history;
      }
      s->reseed(static_cast<uint64_t>(40 + r));
    }
  }
  std::vector<SamplingState*> host_rows, device_rows;
  for (int64_t r = 0; r < kRows; ++r) host_rows.push_back(&host[r]), device_rows.push_back(&device[r]);
  Sampler a, b;
  for (int step = 0; step < 10; ++step) {
    const std::vector<int32_t> expected = a.sample_rows(logits.clone(), host_rows, Backend::host());
    const at::Tensor ids = b.sample_rows_on_device(logits.clone(), device_rows, Backend::host());
    ASSERT_EQ(ids.scalar_type(), at::kLong);
    ASSERT_EQ(ids.device(), logits.device());
    ASSERT_EQ(ids.numel(), kRows);
    for (int64_t r = 0; r < kRows; ++r) {
      EXPECT_EQ(ids[r].item<int64_t>(), expected[static_cast<size_t>(r)]) << "row " << r << ", step " << step;
      EXPECT_EQ(device[r].draws, host[r].draws) << "row " << r;
    }
  }
  // Both streams stand at the same place afterwards.
  for (int64_t r = 0; r < kRows; ++r) EXPECT_EQ(device[r].rng(), host[r].rng()) << "row " << r;
}

TEST(Sampler, SampleRowsOnDeviceRefusesRowsThatNeedTheirIdsOnTheHost) {
  Sampler sampler;
  SamplingState free_row, asking;
  asking.logprobs = 2;
  EXPECT_THROW(sampler.sample_rows_on_device(at::zeros({2, 4}), {&free_row, &asking}, Backend::host()), Error);
  EXPECT_THROW(sampler.sample_rows_on_device(at::zeros({2, 4}), {&free_row}, Backend::host()), Error);
  EXPECT_EQ(sampler.sample_rows_on_device(at::zeros({0, 4}), {}, Backend::host()).numel(), 0);
}

TEST(Sampler, SampleRowsNeedsOneStatePerRow) {
  Sampler sampler;
  SamplingState s;
  EXPECT_THROW(sampler.sample_rows(at::zeros({2, 4}), {&s}, Backend::host()), Error);
  EXPECT_THROW(sampler.sample_rows(at::zeros({4}), {&s}, Backend::host()), Error);
}

}  // namespace
}  // namespace izwi
