#pragma once
// The one check and the one resolution of a request's SamplingParams: what the caller asked for,
// over the model's default for the head, over "off".

#include <cstdint>
#include <string>

#include "izwi/sampling.h"

namespace izwi {

/// The concrete controls a SamplingState carries: every field set.
struct ResolvedSampling {
  float temperature = 0.0f;         ///< 0 = greedy.
  int32_t top_k = 0;                ///< 0 = off.
  float top_p = 1.0f;               ///< 1 = off.
  float repetition_penalty = 1.0f;  ///< 1 = off.
};

/// Throws InvalidArgument naming `field` and the member (e.g. "SpeechParams.codebook_sampling.top_p
/// = 1.5 must be in (0, 1]") for any set value out of range or not finite.
void validate_sampling(const SamplingParams& params, const std::string& field);

/// Each control: the request's value, else the model's default, else off. top_k = 1 is greedy
/// (temperature 0): the sampler would otherwise draw among ties with the best, and liquid-audio
/// decodes greedily there.
ResolvedSampling resolve_sampling(const SamplingParams& requested, const SamplingParams& model_default);

}  // namespace izwi
