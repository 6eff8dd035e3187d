#include "engine/request_processor.h"

#include <cmath>

#include "common/check.h"

namespace izwi {

void resolve_prompt(Request& r, const Tokenizer* tokenizer) {
  const int given = !r.prompt_ids.empty() + !r.prompt.empty() + !r.messages.empty();
  if (given > 1) {
    fail(ErrorCode::InvalidArgument, "request '{}': give the prompt one way: prompt_ids, prompt or messages", r.id);
  }
  if (r.prompt.empty() && r.messages.empty()) return;  // ids (or nothing: validate_request says so)
  const char* field = r.prompt.empty() ? "messages" : "prompt";
  if (tokenizer == nullptr) {
    fail(ErrorCode::InvalidArgument,
         "request '{}': {} needs a tokenizer, and the model folder has none "
         "(tokenizer.json or tekken.json); pass prompt_ids",
         r.id, field);
  }
  try {
    r.prompt_ids = r.prompt.empty() ? tokenizer->encode_chat(r.messages, r.chat)
                                    : tokenizer->encode(r.prompt, r.add_special_tokens);
  } catch (const Error& e) {
    fail(e.code(), "request '{}': {}: {}", r.id, field, e.what());
  }
  if (r.prompt_ids.empty()) fail(ErrorCode::InvalidArgument, "request '{}': {} encodes to no tokens", r.id, field);
}

void validate_request(const Request& r, const RequestLimits& limits) {
  if (r.prompt_ids.empty()) fail(ErrorCode::InvalidArgument, "request '{}': prompt_ids is empty", r.id);
  for (size_t i = 0; i < r.prompt_ids.size(); ++i) {
    const int32_t id = r.prompt_ids[i];
    if (id < 0 || id >= limits.vocab_size) {
      fail(ErrorCode::InvalidArgument, "request '{}': prompt_ids[{}] = {} is outside the vocabulary [0, {})", r.id, i,
           id, limits.vocab_size);
    }
  }
  validate_params(r.id, r.params, static_cast<int32_t>(r.prompt_ids.size()), limits);
}

void validate_params(const std::string& request_id, const GenerationParams& p, int32_t prompt_len,
                     const RequestLimits& limits) {
  if (p.max_tokens < 1)
    fail(ErrorCode::InvalidArgument, "request '{}': params.max_tokens = {} must be >= 1", request_id, p.max_tokens);
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.min_tokens = {} must be in [0, max_tokens = {}]", request_id,
         p.min_tokens, p.max_tokens);
  }
  if (!std::isfinite(p.temperature) || p.temperature < 0) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.temperature = {} must be finite and >= 0", request_id,
         p.temperature);
  }
  if (p.top_k < 0)
    fail(ErrorCode::InvalidArgument, "request '{}': params.top_k = {} must be >= 0", request_id, p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.top_p = {} must be in (0, 1]", request_id, p.top_p);
  }
  if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.repetition_penalty = {} must be finite and > 0", request_id,
         p.repetition_penalty);
  }
  for (size_t i = 0; i < p.stop_token_ids.size(); ++i) {
    const int32_t id = p.stop_token_ids[i];
    if (id < 0 || id >= limits.vocab_size) {
      fail(ErrorCode::InvalidArgument, "request '{}': params.stop_token_ids[{}] = {} is outside the vocabulary [0, {})",
           request_id, i, id, limits.vocab_size);
    }
  }
  for (size_t i = 0; i < p.stop.size(); ++i) {
    if (p.stop[i].empty()) fail(ErrorCode::InvalidArgument, "request '{}': params.stop[{}] is empty", request_id, i);
  }
  if (!p.stop.empty() && !limits.has_tokenizer) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.stop needs a tokenizer, and the model folder has none",
         request_id);
  }
  const int64_t total = static_cast<int64_t>(prompt_len) + p.max_tokens;
  if (total > limits.max_seq_len) {
    fail(ErrorCode::InvalidArgument,
         "request '{}': the prompt ({} positions) + params.max_tokens ({}) = {} exceeds the limit of {} positions",
         request_id, prompt_len, p.max_tokens, total, limits.max_seq_len);
  }
  const int64_t blocks = (total + limits.block_size - 1) / limits.block_size;
  if (blocks > limits.num_kv_blocks) {
    fail(ErrorCode::ResourceExhausted,
         "request '{}': {} positions need {} KV blocks but the pool has {} (num_kv_blocks)", request_id, total, blocks,
         limits.num_kv_blocks);
  }
}

SamplingState make_sampling_state(const GenerationParams& p, const std::vector<int32_t>& eos_ids) {
  SamplingState s;
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.repetition_penalty = p.repetition_penalty;
  s.min_tokens = p.min_tokens;
  s.suppressed_below_min = eos_ids;
  s.suppressed_below_min.insert(s.suppressed_below_min.end(), p.stop_token_ids.begin(), p.stop_token_ids.end());
  s.reseed(p.seed ? *p.seed : std::random_device{}());
  return s;
}

}  // namespace izwi
