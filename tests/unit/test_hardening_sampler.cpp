// Temperatures so small that logits / temperature overflows float must behave as greedy decoding
// (the limit of the distribution), not turn the probabilities into NaN.

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "sampling/sampler.h"

namespace izwi {
namespace {

int32_t sample_with(std::vector<float> logits, float temperature, uint64_t seed, int32_t top_k = 0,
                    float top_p = 1.0f) {
  Sampler sampler;
  SamplingState s;
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.rng.seed(seed);
  return sampler.sample(logits.data(), static_cast<int32_t>(logits.size()), s);
}

TEST(HardeningSampler, TinyTemperatureIsGreedy) {
  const float denormal = 1e-39f;  // below FLT_MIN: 1 / t overflows
  for (float t : {denormal, std::numeric_limits<float>::denorm_min(), 1e-38f, 1e-30f}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      EXPECT_EQ(sample_with({1.0f, 3.0f, 2.0f, -1.0f}, t, seed), 1) << "t=" << t << " seed=" << seed;
      EXPECT_EQ(sample_with({-5.0f, -1.0f, -3.0f}, t, seed), 1) << "t=" << t;               // all negative
      EXPECT_EQ(sample_with({1e10f, 3e10f, 2e10f, -1.0f}, t, seed, 2), 1) << "t=" << t;     // with top-k
      EXPECT_EQ(sample_with({0.5f, 0.25f, 2.0f, 0.0f}, t, seed, 0, 0.9f), 2) << "t=" << t;  // with top-p
    }
  }
}

TEST(HardeningSampler, TinyTemperatureKeepsSuppressedTokensOut) {
  Sampler sampler;
  SamplingState s;
  s.temperature = 1e-39f;
  s.min_tokens = 1;
  s.suppressed_below_min = {1};
  std::vector<float> logits = {1.0f, 9.0f, 2.0f};
  EXPECT_EQ(sampler.sample(logits.data(), 3, s), 2);
}

TEST(HardeningSampler, OrdinaryTemperaturesStillSample) {
  // Not collapsed to greedy: with temperature 1 and equal logits both tokens appear.
  bool saw[2] = {false, false};
  for (uint64_t seed = 0; seed < 64; ++seed) saw[sample_with({0.0f, 0.0f}, 1.0f, seed)] = true;
  EXPECT_TRUE(saw[0] && saw[1]);
}

}  // namespace
}  // namespace izwi
