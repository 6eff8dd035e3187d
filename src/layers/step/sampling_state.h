#pragma once
// Per-request sampling state carried across steps: the controls, the request's own RNG, and
// what the logits processors need to see of the sequence.

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "izwi/output.h"

namespace izwi {

class TokenConstraint;

struct SamplingState {
  float temperature = 0.0f;         ///< 0 = greedy.
  int32_t top_k = 0;                ///< 0 = off.
  float top_p = 1.0f;               ///< 1 = off.
  float repetition_penalty = 1.0f;  ///< 1 = off.
  int32_t min_tokens = 0;
  std::vector<int32_t> suppressed_below_min;  ///< EOS and stop ids, masked while num_generated < min_tokens.
  std::vector<int32_t> suppressed;            ///< Ids the model never emits (e.g. codec control ids), always masked.
  std::mt19937_64 rng;                        ///< The host sampler's draws.
  uint64_t seed = 0;                          ///< The device sampler's draws: a Philox stream of this seed ...
  uint64_t draws = 0;                         ///< ... at this index (one per sampled row).
  const std::vector<int32_t>* history = nullptr;  ///< Prompt + generated ids (repetition penalty).
  size_t history_begin = 0;  ///< Entries of `history` before this one are not ids (embedding positions).
  int32_t num_generated = 0;
  /// Each sampled row's TokenLogprob (with this many alternatives) is appended to
  /// `logprobs_out`; -1 = off (no cost).
  int32_t logprobs = -1;
  std::vector<TokenLogprob> logprobs_out;
  /// The same for the prompt's positions (the executor fills it from the prefill steps' logits).
  int32_t prompt_logprobs = -1;
  std::vector<TokenLogprob> prompt_logprobs_out;
  /// Masks the ids each draw may pick (structured outputs) and takes the drawn id; null = free.
  std::shared_ptr<TokenConstraint> constraint;

  /// Seeds both random streams: a seed gives the same samples every run on one backend.
  void reseed(uint64_t value) {
    rng.seed(value);
    seed = value;
    draws = 0;
  }
};

}  // namespace izwi
