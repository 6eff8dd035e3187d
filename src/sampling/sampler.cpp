#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

#include "common/check.h"
#include "sampling/device_sampler.h"  // defined in CUDA builds only; here for ~Sampler

namespace izwi {

namespace {

int32_t argmax(const float* logits, int32_t vocab) {
  // First maximum wins, as torch.argmax does.
  int32_t best = 0;
  for (int32_t i = 1; i < vocab; ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

}  // namespace

Sampler::Sampler() = default;
Sampler::~Sampler() = default;

std::vector<int32_t> Sampler::sample_rows(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                          KernelBackend backend) {
  IZWI_CHECK(logits.dim() == 2 && logits.size(0) == static_cast<int64_t>(states.size()),
             "sample_rows: {} rows of logits for {} sampling states", logits.dim() == 2 ? logits.size(0) : -1,
             states.size());
#if IZWI_WITH_CUDA
  if (backend == KernelBackend::Cuda && logits.is_cuda()) {
    if (device_ == nullptr) device_ = std::make_unique<DeviceSampler>();
    return device_->sample(logits, states);
  }
#endif
  const at::Tensor host = logits.to(at::kCPU, at::kFloat).contiguous();
  const int32_t vocab = static_cast<int32_t>(host.size(1));
  std::vector<int32_t> ids(states.size());
  for (size_t r = 0; r < states.size(); ++r) {
    ids[r] = sample(host[static_cast<int64_t>(r)].data_ptr<float>(), vocab, *states[r]);
  }
  return ids;
}

void Sampler::apply_repetition_penalty(float* logits, int32_t vocab, const SamplingState& s) {
  if (s.repetition_penalty == 1.0f || s.history == nullptr) return;
  // Each distinct id is penalised once, as HF's gather/scatter does.
  seen_.resize(static_cast<size_t>(vocab), 0);
  const auto begin = s.history->begin() + static_cast<std::ptrdiff_t>(std::min(s.history_begin, s.history->size()));
  for (auto it = begin; it != s.history->end(); ++it) {
    const int32_t id = *it;
    if (id < 0 || id >= vocab || seen_[id]) continue;
    seen_[id] = 1;
    float& l = logits[id];
    l = l < 0 ? l * s.repetition_penalty : l / s.repetition_penalty;
  }
  for (auto it = begin; it != s.history->end(); ++it) {
    if (*it >= 0 && *it < vocab) seen_[*it] = 0;
  }
}

int32_t Sampler::sample(float* logits, int32_t vocab, SamplingState& s) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  apply_repetition_penalty(logits, vocab, s);
  for (int32_t id : s.suppressed) {
    if (id >= 0 && id < vocab) logits[id] = kNegInf;
  }
  if (s.num_generated < s.min_tokens) {
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

  // Candidates sorted by logit, descending; top-k and top-p shrink the prefix that is kept.
  order_.resize(static_cast<size_t>(vocab));
  std::iota(order_.begin(), order_.end(), 0);
  auto by_logit = [logits](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  int32_t keep = vocab;
  if (s.top_k > 0 && s.top_k < vocab) {
    std::nth_element(order_.begin(), order_.begin() + (s.top_k - 1), order_.end(), by_logit);
    // Logits equal to the k-th stay too: top-k removes only those below it, as transformers'
    // TopKLogitsWarper and liquid-audio do (ties are common with bf16 logits).
    const float kth = logits[order_[static_cast<size_t>(s.top_k - 1)]];
    keep = static_cast<int32_t>(
        std::partition(order_.begin() + s.top_k, order_.end(), [logits, kth](int32_t i) { return logits[i] >= kth; }) -
        order_.begin());
  }
  std::sort(order_.begin(), order_.begin() + keep, by_logit);

  const float max_logit = logits[order_[0]];
  probs_.resize(static_cast<size_t>(keep));
  double total = 0;
  for (int32_t i = 0; i < keep; ++i) {
    probs_[i] = std::exp(logits[order_[i]] - max_logit);
    total += probs_[i];
  }
  if (s.top_p < 1.0f) {
    // Smallest prefix whose mass reaches top_p (always at least one token).
    double mass = 0;
    int32_t cut = keep;
    for (int32_t i = 0; i < keep; ++i) {
      mass += probs_[i] / total;
      if (mass >= s.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    total = 0;
    for (int32_t i = 0; i < keep; ++i) total += probs_[i];
  }

  std::uniform_real_distribution<double> uniform(0.0, total);
  double target = uniform(s.rng);
  for (int32_t i = 0; i < keep; ++i) {
    target -= probs_[i];
    if (target < 0) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace izwi
