#pragma once
// Checks a request before it reaches the step loop and prepares its sampling state.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/config.h"
#include "izwi/request.h"
#include "izwi/tokenizer.h"
#include "layers/step/sampling_state.h"
#include "sampling/sampling_params.h"

namespace izwi {

/// What validation needs to know about the loaded model and the engine's limits.
struct RequestLimits {
  int32_t vocab_size = 0;
  bool has_tokenizer = false;  ///< Stop strings need text.
  int32_t max_seq_len = 0;     ///< Prompt + max_tokens.
  int32_t block_size = 16;
  int32_t num_kv_blocks = 0;
};

/// Fills prompt_ids from `prompt` or `messages` (exactly one of the three must be given) with
/// `tokenizer` (nullptr when the model folder has none). Throws InvalidArgument naming the field.
void resolve_prompt(Request& request, const Tokenizer* tokenizer);

/// Throws izwi::Error (InvalidArgument, or ResourceExhausted when the request can never fit
/// the KV pool) naming the offending field; its sampling is named `sampling_field` (the caller's
/// name for params.sampling).
void validate_request(const Request& request, const RequestLimits& limits,
                      const std::string& sampling_field = "params.sampling");
/// The checks of validate_request that concern the length and the stops (not the sampling), for
/// requests whose `prompt_len` positions are not token ids (speech synthesis, audio chat).
void validate_params(const std::string& id, const GenerationParams& params, int32_t prompt_len,
                     const RequestLimits& limits);
/// validate_sampling for a head that has no repetition penalty (a speech model's per-frame head,
/// an interleaved text head): a penalty other than 1 is rejected too, naming `field`.
void validate_sampling_without_penalty(const SamplingParams& params, const std::string& field);

/// Sampling state for a validated request: its params.sampling over `model_default`. `eos_ids`
/// are suppressed below min_tokens with the stop ids; an unseeded request draws its seed from
/// std::random_device.
SamplingState make_sampling_state(const GenerationParams& params, const SamplingParams& model_default,
                                  const std::vector<int32_t>& eos_ids);
/// The state of a model's second head (the frames' other codebooks): `sampling` over
/// `model_default`, with its own random stream derived from the request's `seed` when it has one.
SamplingState make_codebook_sampling_state(const SamplingParams& sampling, const SamplingParams& model_default,
                                           std::optional<uint64_t> seed);

}  // namespace izwi
