#pragma once
/// @file output.h
/// What the engine returns for a request, whole or in streamed chunks.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "izwi/errors.h"
#include "izwi/export.h"

namespace izwi {

/// Why a request ended.
enum class FinishReason {
  None,    ///< Not finished (only in intermediate stream chunks).
  Eos,     ///< The model produced an end-of-sequence id.
  Length,  ///< max_tokens reached.
  Stop,    ///< A stop token id was produced.
  Abort,   ///< abort() or shutdown().
  Error,   ///< The request failed inside the engine; see the error message.
};

/// Name of a finish reason, e.g. "length".
IZWI_API const char* to_string(FinishReason reason) noexcept;

/// Wall-clock timings of one request, in milliseconds.
struct Timings {
  double queue_ms = 0;  ///< Submission to first scheduling.
  double ttft_ms = 0;   ///< Submission to first generated token.
  double total_ms = 0;  ///< Submission to finish.
};

/// The log probability of one token and its most likely alternatives: log-softmax of the logits
/// the model produced at that position, before repetition penalty, temperature, top-k and top-p.
struct TokenLogprob {
  int32_t id = 0;        ///< The token (generated, or the prompt's).
  float logprob = 0.0f;  ///< log P(id).
  /// The N most likely ids with their log probabilities, descending (GenerationParams::logprobs
  /// or prompt_logprobs = N; empty for 0).
  std::vector<std::pair<int32_t, float>> top;
};

/// The result of a finished request.
struct Output {
  std::string request_id;       ///< Request::id, or the id the engine assigned (Engine::abort takes it).
  std::vector<int32_t> tokens;  ///< Generated ids (prompt excluded); codebook 0 of each frame for speech.
  std::string text;             ///< Their text, special tokens skipped (needs a tokenizer).
  std::vector<float> audio;     ///< Speech synthesis: mono PCM at `sample_rate`.
  int32_t sample_rate = 0;      ///< Of `audio` (ModelInfo::output_sample_rate).
  std::vector<std::vector<int32_t>> audio_codes;  ///< Speech synthesis: each frame's codes, codebook 0 first.
  /// Audio chat: per generated item (each has its entry in `tokens`), true for a frame (its codes
  /// are the next of audio_codes, its token is codebook 0) and false for a text token.
  std::vector<bool> item_is_frame;
  FinishReason finish_reason = FinishReason::None;  ///< Eos, Length, Stop or Abort.
  Timings timings;                                  ///< Where the request's time went.
  int32_t prefix_cache_hit_tokens = 0;              ///< Prompt positions served from the prefix cache.
  int32_t num_preemptions = 0;                      ///< Times the request was preempted and recomputed.
  /// With GenerationParams::logprobs: one entry per generated token, in order.
  std::vector<TokenLogprob> logprobs;
  /// With GenerationParams::prompt_logprobs: prompt tokens 1.. (the first has none), in order.
  std::vector<TokenLogprob> prompt_logprobs;
  int32_t index = 0;  ///< The choice this is (GenerationParams::n), 0 first.
  /// With GenerationParams::n > 1: every choice, by index (choices[i].index == i); the fields
  /// above are choice 0's. Empty for n = 1.
  std::vector<Output> choices;
};

/// One piece of a streamed request. The last chunk has finished == true and carries the totals.
/// With GenerationParams::n > 1 each chunk belongs to one choice (`index`), each choice ends with
/// its own finished chunk, and the stream ends after the last choice's.
struct StreamChunk {
  std::string request_id;       ///< As in Output.
  std::vector<int32_t> tokens;  ///< Ids generated since the previous chunk.
  /// Text completed since the previous chunk: never a partial UTF-8 character; text that may be
  /// the start of a stop string waits for the next chunk. The deltas concatenate to Output::text.
  std::string text;
  std::vector<float> audio;                         ///< Speech synthesis: PCM decoded since the previous chunk.
  std::vector<std::vector<int32_t>> audio_codes;    ///< Frames generated since the previous chunk.
  std::vector<bool> item_is_frame;                  ///< Audio chat: the order of `tokens` and frames, as in Output.
  bool finished = false;                            ///< The last chunk of the request.
  FinishReason finish_reason = FinishReason::None;  ///< Set in the last chunk.
  std::string error;                                ///< Set when finish_reason == Error.
  ErrorCode error_code = ErrorCode::Internal;       ///< Kind of the error, when finish_reason == Error.
  Timings timings;                                  ///< Valid in the last chunk.
  int32_t prefix_cache_hit_tokens = 0;              ///< Valid in the last chunk.
  std::vector<TokenLogprob> logprobs;               ///< With GenerationParams::logprobs: one per entry of `tokens`.
  /// With GenerationParams::prompt_logprobs: all of Output::prompt_logprobs, in the first chunk.
  std::vector<TokenLogprob> prompt_logprobs;
  int32_t index = 0;  ///< The choice of these tokens (GenerationParams::n), as Output::index.
};

}  // namespace izwi
