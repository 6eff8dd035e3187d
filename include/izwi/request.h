#pragma once
/// @file request.h
/// What a caller submits to the engine.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "izwi/chat.h"
#include "izwi/sampling.h"
#include "izwi/structured_output.h"

namespace izwi {

/// The most alternatives GenerationParams::logprobs and prompt_logprobs may ask for.
inline constexpr int32_t kMaxLogprobs = 20;
/// The most choices GenerationParams::n may ask for.
inline constexpr int32_t kMaxChoices = 128;

/// Decoding controls, applied per request.
struct GenerationParams {
  /// New tokens at most (>= 1; 0 with prompt_logprobs: score the prompt, generate nothing).
  int32_t max_tokens = 256;
  int32_t min_tokens = 0;   ///< EOS and stop ids are suppressed until this many exist.
  bool ignore_eos = false;  ///< Keep generating past EOS (stop ids still apply).
  /// Unset fields take the model's defaults (ModelInfo::default_sampling: generation_config.json
  /// as Hugging Face's generate reads it; greedy when it has no do_sample: true).
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;  ///< Finish (reason Stop) when one is generated.
  /// Finish (reason Stop) when the output text contains one of these; the text ends before it.
  /// Matched across token boundaries; needs a model folder with a tokenizer.
  std::vector<std::string> stop;
  std::optional<uint64_t> seed;  ///< Fixed seed for reproducible sampling.
  /// Output::logprobs for each generated token with its N most likely alternatives, N in [0, 20];
  /// unset = none. The values are log-softmax of the model's logits, before repetition penalty,
  /// temperature, top-k and top-p (OpenAI's and vLLM's convention).
  std::optional<int32_t> logprobs;
  /// Output::prompt_logprobs for the prompt's tokens (after the first) with their N most likely
  /// alternatives, N in [0, 20]; unset = none. Such a request bypasses the prefix cache (every
  /// prompt position's logits are computed).
  std::optional<int32_t> prompt_logprobs;
  /// Independent choices (completions) of the one prompt, in [1, kMaxChoices]: OpenAI's `n`.
  /// Choice i draws from its own random stream, seeded with seed + i when `seed` is set. The
  /// prompt is computed once: choices 1.. are admitted when choice 0's prefill is done and take
  /// its full blocks from the prefix cache (so each computes at most one block of the prompt).
  /// Without EngineConfig::enable_prefix_cache, or with prompt_logprobs (which bypasses the
  /// cache), every choice computes the prompt itself.
  int32_t n = 1;
  /// Constrains the output to JSON (izwi/structured_output.h); not with ignore_eos (the output
  /// ends where the document does).
  StructuredOutput structured_output;
};

/// One generation request. The prompt is given one way: token ids, text, or chat messages (text
/// and messages need a model folder with a tokenizer; they are tokenized on the caller's thread).
struct Request {
  std::string id;                     ///< Unique among live requests; empty = engine assigns one.
  std::vector<int32_t> prompt_ids;    ///< Prompt token ids (each < vocab size).
  std::string prompt;                 ///< Prompt text (UTF-8).
  bool add_special_tokens = true;     ///< With `prompt`: add BOS etc. as the tokenizer's config says.
  std::vector<ChatMessage> messages;  ///< A conversation, rendered with the model's chat template.
  ChatOptions chat;                   ///< With `messages`: tools, template keyword arguments, generation prompt.
  GenerationParams params;            ///< Length, sampling and stop conditions.
  int32_t priority = 0;               ///< Larger runs first under SchedulingPolicy::Priority.
};

}  // namespace izwi
