#include "sampling/sampler.h"

// GCC 12 warns inside its own AVX-512 headers (GCC bug 105593) where the vector maximum is
// inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>

#include "common/check.h"
#include "kernels/cpu/simd.h"
#include "sampling/device_sampler.h"  // defined in CUDA builds only; here for ~Sampler
#include "sampling/token_bitmask.h"
#include "sampling/token_constraint.h"

namespace izwi {

namespace {

// The largest of n logits, NaN skipped (-inf when there is none).
float block_maximum(const float* logits, int32_t n) {
  float best = -std::numeric_limits<float>::infinity();
  int32_t i = 0;
#if IZWI_SIMD_LANES > 0
  simd::Vec acc = simd::broadcast(best);
  for (; i + simd::kLanes <= n; i += simd::kLanes) acc = simd::max(simd::load(logits + i), acc);  // keeps acc on NaN
  float lanes[simd::kLanes];
  simd::store(lanes, acc);
  for (float v : lanes) best = std::max(best, v);
#endif
  for (; i < n; ++i) {
    if (logits[i] > best) best = logits[i];
  }
  return best;
}

// probs[i] = e^(logits[i] - max_logit) for n ids (0 for -inf); returns their sum.
double fill_probabilities(const float* logits, int32_t n, float max_logit, float* probs) {
  int32_t i = 0;
#if IZWI_SIMD_LANES > 0
  const simd::Vec shift = simd::broadcast(max_logit);
  for (; i + simd::kLanes <= n; i += simd::kLanes) {
    simd::store(probs + i, simd::exp_or_zero(simd::sub(simd::load(logits + i), shift)));
  }
#endif
  for (; i < n; ++i) probs[i] = std::exp(logits[i] - max_logit);
  double sums[4] = {0, 0, 0, 0};  // independent sums: the adds' latency, not their count, bounds one
  i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int lane = 0; lane < 4; ++lane) sums[lane] += probs[i + lane];
  }
  for (; i < n; ++i) sums[0] += probs[i];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

int32_t argmax(const float* logits, int32_t vocab) {
  // First maximum wins, as torch.argmax does. Blocks whose vector maximum is not above the best so
  // far are skipped; the others are scanned in order: the same index as one scan of all the ids,
  // at vector speed (greedy decoding takes the argmax of every row of a step).
  constexpr int32_t kBlock = 1024;
  int32_t best = 0;
  for (int32_t b = 0; b < vocab; b += kBlock) {
    const int32_t end = std::min(vocab, b + kBlock);
    if (!(block_maximum(logits + b, end - b) > logits[best])) continue;
    for (int32_t i = b; i < end; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
  }
  return best;
}

}  // namespace

at::Tensor log_softmax_rows(const at::Tensor& logits) { return at::log_softmax(logits.to(at::kFloat), 1); }

std::vector<TokenLogprob> pick_logprobs(const at::Tensor& log_probs, const std::vector<int32_t>& ids,
                                        const std::vector<int32_t>& top) {
  IZWI_CHECK(log_probs.size(0) == static_cast<int64_t>(ids.size()) && ids.size() == top.size(),
             "pick_logprobs: {} rows for {} ids", log_probs.size(0), ids.size());
  std::vector<TokenLogprob> out(ids.size());
  if (ids.empty()) return out;
  const at::Tensor index = at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong).to(log_probs.device());
  const at::Tensor chosen = log_probs.gather(1, index.unsqueeze(1)).squeeze(1).to(at::kCPU).contiguous();
  const int64_t k = std::min<int64_t>(*std::max_element(top.begin(), top.end()), log_probs.size(1));
  at::Tensor values, indices;
  if (k > 0) {
    auto [v, i] = log_probs.topk(k, 1, /*largest=*/true, /*sorted=*/true);
    values = v.to(at::kCPU).contiguous();
    indices = i.to(at::kCPU).contiguous();
  }
  for (size_t r = 0; r < ids.size(); ++r) {
    out[r].id = ids[r];
    out[r].logprob = chosen.data_ptr<float>()[r];
    for (int64_t j = 0; j < std::min<int64_t>(top[r], k); ++j) {
      const int64_t at = static_cast<int64_t>(r) * k + j;
      const float value = values.data_ptr<float>()[at];
      if (value == -std::numeric_limits<float>::infinity())
        break;  // masked out (structured output): not an alternative
      out[r].top.emplace_back(static_cast<int32_t>(indices.data_ptr<int64_t>()[at]), value);
    }
  }
  return out;
}

Sampler::Sampler() : scratch_(1) {}
Sampler::~Sampler() = default;

std::vector<int32_t> Sampler::sample_rows(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                          const Backend& backend) {
  IZWI_CHECK(logits.dim() == 2 && logits.size(0) == static_cast<int64_t>(states.size()),
             "sample_rows: {} rows of logits for {} sampling states", logits.dim() == 2 ? logits.size(0) : -1,
             states.size());
  std::vector<int64_t> asking, constrained;
  for (size_t r = 0; r < states.size(); ++r) {
    if (states[r]->logprobs >= 0) asking.push_back(static_cast<int64_t>(r));
    if (states[r]->constraint != nullptr) constrained.push_back(static_cast<int64_t>(r));
  }
  // Constrained rows are masked first, so their log probabilities are those of the distribution
  // they are drawn from (vLLM's order: the grammar's bitmask, then the sampler).
  const at::Tensor masked = constrained.empty() ? logits : mask_rows(logits, states, constrained, backend);
  std::vector<int32_t> ids;
  if (asking.empty()) {
    ids = sample_ids(masked, states, backend);
  } else {
    ids = sample_with_logprobs(masked, states, asking, backend);
  }
  for (int64_t r : constrained) {
    SamplingState& s = *states[static_cast<size_t>(r)];
    IZWI_CHECK(s.constraint->accept(ids[static_cast<size_t>(r)]), "sampled id {} outside its row's token mask",
               ids[static_cast<size_t>(r)]);
  }
  return ids;
}

at::Tensor Sampler::mask_rows(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                              const std::vector<int64_t>& constrained, const Backend& backend) {
  const int64_t count = static_cast<int64_t>(constrained.size()), vocab = logits.size(1);
  const int64_t per_row = states[static_cast<size_t>(constrained[0])]->constraint->bitmask_words();
  for (int64_t r : constrained) {
    const int64_t words = states[static_cast<size_t>(r)]->constraint->bitmask_words();
    IZWI_CHECK(words == per_row && words * 32 >= vocab, "a token mask of {} words for a {}-id row (others: {})", words,
               vocab, per_row);
  }
  const bool on_device = logits.is_cuda() && backend.cuda_kernels();
  at::Tensor words = at::empty({count, per_row}, at::TensorOptions().dtype(at::kInt).pinned_memory(on_device));
  uint32_t* bits = reinterpret_cast<uint32_t*>(words.data_ptr<int32_t>());
  // Each row's mask from its own matcher; maskers are shared and thread-safe.
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      states[static_cast<size_t>(constrained[static_cast<size_t>(i)])]->constraint->fill_bitmask(bits + i * per_row);
    }
  });
  if (on_device) {
    // Only the words cross; the mask is expanded and applied where the logits are.
    at::Tensor device_logits = logits.to(at::kFloat);
    const at::Tensor rows = at::tensor(constrained, at::kLong).to(logits.device(), /*non_blocking=*/true);
    apply_token_bitmask(device_logits, rows, words.to(logits.device(), /*non_blocking=*/true));
    return device_logits;
  }
  at::Tensor host = logits.to(at::kCPU, at::kFloat).contiguous();
  for (int64_t i = 0; i < count; ++i) {
    apply_token_bitmask(host.data_ptr<float>() + constrained[static_cast<size_t>(i)] * vocab, vocab,
                        bits + i * per_row);
  }
  return host;
}

std::vector<int32_t> Sampler::sample_with_logprobs(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                                   const std::vector<int64_t>& asking, const Backend& backend) {
  // Taken before sampling: the processors work on the logits in place.
  const at::Tensor rows = at::tensor(asking, at::kLong).to(logits.device());
  const at::Tensor log_probs = log_softmax_rows(logits.index_select(0, rows));
  const std::vector<int32_t> ids = sample_ids(logits, states, backend);
  std::vector<int32_t> chosen, top;
  for (int64_t r : asking) {
    chosen.push_back(ids[static_cast<size_t>(r)]);
    top.push_back(states[static_cast<size_t>(r)]->logprobs);
  }
  std::vector<TokenLogprob> records = pick_logprobs(log_probs, chosen, top);
  for (size_t i = 0; i < asking.size(); ++i) {
    states[static_cast<size_t>(asking[i])]->logprobs_out.push_back(std::move(records[i]));
  }
  return ids;
}

at::Tensor Sampler::sample_rows_on_device(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                          const Backend& backend) {
  IZWI_CHECK(logits.dim() == 2 && logits.size(0) == static_cast<int64_t>(states.size()),
             "sample_rows_on_device: {} rows of logits for {} sampling states", logits.dim() == 2 ? logits.size(0) : -1,
             states.size());
  for (size_t r = 0; r < states.size(); ++r) {
    IZWI_CHECK(states[r]->constraint == nullptr && states[r]->logprobs < 0,
               "sample_rows_on_device: row {} has a constraint or asks for logprobs, which need its id on the host "
               "(use sample_rows)",
               r);
  }
  return draw_ids(logits, states, backend).to(logits.device());
}

std::vector<int32_t> Sampler::sample_ids(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                         const Backend& backend) {
  const at::Tensor ids = draw_ids(logits, states, backend).to(at::kCPU, at::kInt);  // the call's one copy back
  return std::vector<int32_t>(ids.data_ptr<int32_t>(), ids.data_ptr<int32_t>() + ids.numel());
}

at::Tensor Sampler::draw_ids(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                             const Backend& backend) {
#if IZWI_WITH_CUDA
  if (backend.cuda_kernels() && logits.is_cuda()) {
    if (device_ == nullptr) device_ = std::make_unique<DeviceSampler>();
    return device_->sample(logits, states);
  }
#else
  (void)backend;
#endif
  const at::Tensor host = logits.to(at::kCPU, at::kFloat).contiguous();
  const int32_t vocab = static_cast<int32_t>(host.size(1));
  float* rows = host.data_ptr<float>();
  at::Tensor out = at::empty({static_cast<int64_t>(states.size())}, at::kLong);
  int64_t* ids = out.data_ptr<int64_t>();
  // Rows are independent (each draws from its own state's generator), so the threads take them in
  // turn, each with its own scratch: at 64 requests and a temperature, 64 whole-vocabulary draws
  // per step. A state given for two rows keeps them on one thread, in order.
  std::vector<SamplingState*> distinct(states);
  std::sort(distinct.begin(), distinct.end());
  const bool parallel = std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end();
  scratch_.resize(std::max(scratch_.size(), static_cast<size_t>(at::get_num_threads())));
  const auto sample_range = [&](int64_t begin, int64_t end) {
    Scratch& scratch = scratch_[parallel ? static_cast<size_t>(at::get_thread_num()) : 0];
    for (int64_t r = begin; r < end; ++r) ids[r] = sample_with(rows + r * vocab, vocab, *states[r], scratch);
  };
  if (parallel) {
    at::parallel_for(0, static_cast<int64_t>(states.size()), 1, sample_range);
  } else {
    sample_range(0, static_cast<int64_t>(states.size()));
  }
  return out;
}

int32_t Sampler::sample(float* logits, int32_t vocab, SamplingState& state) {
  return sample_with(logits, vocab, state, scratch_[0]);
}

void Sampler::apply_repetition_penalty(float* logits, int32_t vocab, const SamplingState& s, Scratch& scratch) {
  std::vector<uint8_t>& seen = scratch.seen;
  if (s.repetition_penalty == 1.0f || s.history == nullptr) return;
  // Each distinct id is penalised once, as HF's gather/scatter does.
  seen.resize(static_cast<size_t>(vocab), 0);
  const auto begin = s.history->begin() + static_cast<std::ptrdiff_t>(std::min(s.history_begin, s.history->size()));
  for (auto it = begin; it != s.history->end(); ++it) {
    const int32_t id = *it;
    if (id < 0 || id >= vocab || seen[id]) continue;
    seen[id] = 1;
    float& l = logits[id];
    l = l < 0 ? l * s.repetition_penalty : l / s.repetition_penalty;
  }
  for (auto it = begin; it != s.history->end(); ++it) {
    if (*it >= 0 && *it < vocab) seen[*it] = 0;
  }
}

int32_t Sampler::sample_with(float* logits, int32_t vocab, SamplingState& s, Scratch& scratch) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  apply_repetition_penalty(logits, vocab, s, scratch);
  std::vector<int32_t>& order = scratch.order;
  std::vector<float>& probs = scratch.probs;
  for (int32_t id : s.suppressed) {
    if (id >= 0 && id < vocab) logits[id] = kNegInf;
  }
  // A complete document that nothing may follow ends here, min_tokens or not.
  if (s.num_generated < s.min_tokens && !(s.constraint != nullptr && s.constraint->must_end())) {
    for (int32_t id : s.suppressed_below_min) {
      if (id >= 0 && id < vocab) logits[id] = kNegInf;
    }
  }
  if (!(s.temperature > 0.0f)) return argmax(logits, vocab);

  // A temperature so small that some logit / temperature overflows float (1e-39, or 1e-30 with
  // logits near 1e10) would turn the probabilities into inf - inf = NaN. The distribution's limit
  // as the temperature goes to 0 is the argmax, so decode greedily then (top-k and top-p keep the
  // argmax, so they change nothing).
  float max_abs = 0.0f;
  for (int32_t i = 0; i < vocab; ++i) {
    if (std::isfinite(logits[i])) max_abs = std::max(max_abs, std::fabs(logits[i]));
  }
  if (static_cast<double>(max_abs) / static_cast<double>(s.temperature) >
      static_cast<double>(std::numeric_limits<float>::max())) {
    return argmax(logits, vocab);
  }

  for (int32_t i = 0; i < vocab; ++i) logits[i] /= s.temperature;

  probs.resize(static_cast<size_t>(vocab));
  order.resize(static_cast<size_t>(vocab));
  const bool top_k = s.top_k > 0 && s.top_k < vocab, top_p = s.top_p < 1.0f;
  if (!top_k && !top_p) {
    // Temperature alone keeps every id: the draw walks them as they lie, with no sort.
    const double total = fill_probabilities(logits, vocab, block_maximum(logits, vocab), probs.data());
    std::iota(order.begin(), order.end(), 0);
    return draw(order.data(), vocab, total, probs, s);
  }

  // Otherwise the draw walks the candidates by logit, descending (ties by id); top-k keeps the
  // first k (and the ids tied with the k-th, as transformers' TopKLogitsWarper and liquid-audio
  // do: ties are common with bf16 logits), top-p the shortest prefix reaching its mass (at least
  // one id). best(n) puts the ids whose logit is at least the n-th largest into order, sorted,
  // and returns how many: a prefix of the walk, found by selecting on the values rather than
  // sorting every id (a full sort of a 152K vocabulary takes milliseconds).
  auto by_logit = [logits](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  const auto best = [&](int32_t n) {
    scratch.values.assign(logits, logits + vocab);
    std::nth_element(scratch.values.begin(), scratch.values.begin() + (n - 1), scratch.values.end(),
                     std::greater<float>());
    const float threshold = scratch.values[static_cast<size_t>(n - 1)];
    int32_t count = 0;
    for (int32_t i = 0; i < vocab; ++i) {
      if (logits[i] >= threshold) order[static_cast<size_t>(count++)] = i;
    }
    std::sort(order.begin(), order.begin() + count, by_logit);
    return count;
  };
  const auto nucleus = [&](int32_t count, double total) {
    double mass = 0;
    for (int32_t i = 0; i < count; ++i) {
      mass += probs[order[i]] / total;
      if (mass >= s.top_p) return i + 1;
    }
    return 0;
  };
  int32_t keep = 0;
  if (top_k) {
    const int32_t pool = best(s.top_k);
    const float max_logit = logits[order[0]];
    double total = 0;
    for (int32_t i = 0; i < pool; ++i) total += probs[order[i]] = std::exp(logits[order[i]] - max_logit);
    keep = top_p ? nucleus(pool, total) : pool;
    if (keep == 0) keep = pool;
  } else {
    // Top-p over the whole vocabulary: the best 256 first, eight times as many until they reach
    // the mass.
    const double total = fill_probabilities(logits, vocab, block_maximum(logits, vocab), probs.data());
    for (int32_t n = std::min(vocab, 256);; n = static_cast<int32_t>(std::min<int64_t>(vocab, n * int64_t{8}))) {
      const int32_t count = best(n);
      keep = nucleus(count, total);
      if (keep > 0) break;
      if (n == vocab) {
        keep = count;
        break;
      }
    }
  }
  double kept = 0;
  for (int32_t i = 0; i < keep; ++i) kept += probs[order[i]];
  return draw(order.data(), keep, kept, probs, s);
}

int32_t Sampler::draw(const int32_t* ids, int32_t count, double total, const std::vector<float>& probs,
                      SamplingState& s) {
  std::uniform_real_distribution<double> uniform(0.0, total);
  double target = uniform(s.rng);
  int32_t last = ids[0];
  for (int32_t i = 0; i < count; ++i) {
    if (probs[ids[i]] == 0.0f) continue;
    target -= probs[ids[i]];
    if (target < 0) return ids[i];
    last = ids[i];
  }
  return last;  // rounding left target at or above 0: the last id that can be drawn, never a masked one
}

}  // namespace izwi
