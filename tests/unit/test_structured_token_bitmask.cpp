// Applying a constraint's token bitmask: the host loop and the tensor form (the one the CUDA path
// runs on the device, here on CPU tensors) mask the same ids; sample_rows masks constrained rows
// only, hands each drawn id to its constraint, lets the end through below min_tokens once the
// constraint must end, and takes logprobs after the mask.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "kernels/backend.h"
#include "sampling/sampler.h"
#include "sampling/token_bitmask.h"
#include "sampling/token_constraint.h"

namespace izwi {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Allows a fixed set of ids; records what it was given.
class FixedConstraint : public TokenConstraint {
 public:
  FixedConstraint(int64_t vocab, std::set<int32_t> allowed, bool must_end = false)
      : words_((vocab + 31) / 32), allowed_(std::move(allowed)), must_end_(must_end) {}
  int64_t bitmask_words() const override { return words_; }
  void fill_bitmask(uint32_t* words) override {
    std::fill(words, words + words_, 0u);
    for (int32_t id : allowed_) words[id / 32] |= 1u << (id % 32);
  }
  bool accept(int32_t id) override {
    accepted.push_back(id);
    return allowed_.count(id) > 0;
  }
  bool must_end() const override { return must_end_; }
  std::vector<int32_t> accepted;

 private:
  int64_t words_;
  std::set<int32_t> allowed_;
  bool must_end_;
};

TEST(TokenBitmask, HostAndTensorFormsMaskTheSameIds) {
  std::mt19937 rng(7);
  for (int64_t vocab : {1, 31, 32, 33, 100, 1000}) {
    const int64_t words = (vocab + 31) / 32 + 1;  // a longer mask than the row is cut off
    const int64_t rows = 3;
    std::vector<uint32_t> bits(static_cast<size_t>(rows * words));
    for (size_t i = 0; i < bits.size(); ++i) {
      const uint32_t kind = rng() % 4;  // all clear, all set, or mixed words
      bits[i] = kind == 0 ? 0u : kind == 1 ? ~0u : static_cast<uint32_t>(rng());
    }
    const at::Tensor logits = at::randn({4, vocab});  // row 1 unconstrained
    const std::vector<int64_t> constrained = {0, 2, 3};
    at::Tensor host = logits.clone();
    for (size_t i = 0; i < constrained.size(); ++i) {
      apply_token_bitmask(host.data_ptr<float>() + constrained[i] * vocab, vocab, bits.data() + i * words);
    }
    at::Tensor tensor_form = logits.to(at::kBFloat16);
    const at::Tensor word_tensor =
        at::from_blob(bits.data(), {rows, words}, at::TensorOptions().dtype(at::kInt)).clone();
    apply_token_bitmask(tensor_form, at::tensor(constrained, at::kLong), word_tensor);
    for (int64_t r = 0; r < 4; ++r) {
      for (int64_t id = 0; id < vocab; ++id) {
        const float h = host[r][id].item<float>(), t = tensor_form[r][id].item<float>();
        const auto it = std::find(constrained.begin(), constrained.end(), r);
        const bool allowed =
            it == constrained.end() ||
            (bits[static_cast<size_t>((it - constrained.begin()) * words + id / 32)] >> (id % 32)) & 1u;
        EXPECT_EQ(h == kNegInf, !allowed) << "vocab " << vocab << " row " << r << " id " << id;
        EXPECT_EQ(t == kNegInf, !allowed) << "vocab " << vocab << " row " << r << " id " << id;
        if (allowed) EXPECT_EQ(h, logits[r][id].item<float>());
      }
    }
  }
}

TEST(TokenBitmask, SampleRowsMasksConstrainedRowsOnly) {
  Sampler sampler;
  const int64_t vocab = 300;
  auto constraint = std::make_shared<FixedConstraint>(vocab, std::set<int32_t>{3, 77, 299});
  SamplingState constrained, free_row;
  constrained.temperature = free_row.temperature = 1.0f;
  constrained.reseed(1);
  free_row.reseed(2);
  constrained.constraint = constraint;
  constrained.logprobs = 5;
  std::set<int32_t> free_ids;
  for (int step = 0; step < 200; ++step) {
    const at::Tensor logits = at::randn({2, vocab}) * 3;
    const std::vector<int32_t> ids = sampler.sample_rows(logits, {&free_row, &constrained}, Backend::host());
    EXPECT_TRUE(ids[1] == 3 || ids[1] == 77 || ids[1] == 299) << ids[1];
    free_ids.insert(ids[0]);
  }
  EXPECT_EQ(constraint->accepted.size(), 200u);
  EXPECT_GT(free_ids.size(), 3u);  // the free row draws from the whole vocabulary
  // Logprobs of the masked distribution: three alternatives (never a masked one), summing to 1.
  ASSERT_EQ(constrained.logprobs_out.size(), 200u);
  for (const TokenLogprob& t : constrained.logprobs_out) {
    ASSERT_EQ(t.top.size(), 3u);
    double mass = 0;
    for (const auto& [id, logprob] : t.top) mass += std::exp(logprob);
    EXPECT_NEAR(mass, 1.0, 1e-5);
  }
}

TEST(TokenBitmask, MustEndLetsTheEndThroughBelowMinTokens) {
  Sampler sampler;
  const int64_t vocab = 64;
  const int32_t eos = 9;
  SamplingState s;
  s.temperature = 1.0f;
  s.reseed(3);
  s.min_tokens = 10;
  s.suppressed_below_min = {eos};
  s.constraint = std::make_shared<FixedConstraint>(vocab, std::set<int32_t>{eos}, /*must_end=*/true);
  EXPECT_EQ(sampler.sample_rows(at::randn({1, vocab}), {&s}, Backend::host())[0], eos);
  // A constraint that may still go on keeps min_tokens: the end stays suppressed.
  SamplingState going_on = s;
  going_on.constraint = std::make_shared<FixedConstraint>(vocab, std::set<int32_t>{eos, 20}, /*must_end=*/false);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(sampler.sample_rows(at::randn({1, vocab}), {&going_on}, Backend::host())[0], 20);
  }
}

}  // namespace
}  // namespace izwi
