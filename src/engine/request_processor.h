#pragma once
// Checks a request before it reaches the step loop and prepares its sampling state.

#include <cstdint>
#include <string>
#include <vector>

#include "izwi/config.h"
#include "izwi/request.h"
#include "izwi/tokenizer.h"
#include "layers/step/sampling_state.h"

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
/// the KV pool) naming the offending field.
void validate_request(const Request& request, const RequestLimits& limits);
/// The checks of validate_request that concern the parameters and the length, for requests whose
/// `prompt_len` positions are not token ids (speech synthesis).
void validate_params(const std::string& id, const GenerationParams& params, int32_t prompt_len,
                     const RequestLimits& limits);

/// Sampling state for a validated request. `eos_ids` are suppressed below min_tokens with
/// the stop ids; an unseeded request draws its seed from std::random_device.
SamplingState make_sampling_state(const GenerationParams& params, const std::vector<int32_t>& eos_ids);

}  // namespace izwi
