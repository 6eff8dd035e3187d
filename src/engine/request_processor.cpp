#include "engine/request_processor.h"

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

void validate_request(const Request& r, const RequestLimits& limits, const std::string& sampling_field) {
  if (r.prompt_ids.empty()) fail(ErrorCode::InvalidArgument, "request '{}': prompt_ids is empty", r.id);
  for (size_t i = 0; i < r.prompt_ids.size(); ++i) {
    const int32_t id = r.prompt_ids[i];
    if (id < 0 || id >= limits.vocab_size) {
      fail(ErrorCode::InvalidArgument, "request '{}': prompt_ids[{}] = {} is outside the vocabulary [0, {})", r.id, i,
           id, limits.vocab_size);
    }
  }
  try {
    validate_sampling(r.params.sampling, sampling_field);
  } catch (const Error& e) {
    fail(e.code(), "request '{}': {}", r.id, e.what());
  }
  validate_params(r.id, r.params, static_cast<int32_t>(r.prompt_ids.size()), limits);
}

void validate_params(const std::string& request_id, const GenerationParams& p, int32_t prompt_len,
                     const RequestLimits& limits) {
  // max_tokens 0 scores the prompt (echo with logprobs) and generates nothing.
  if (p.max_tokens < 1 && !(p.max_tokens == 0 && p.prompt_logprobs)) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.max_tokens = {} must be >= 1 (0 only with prompt_logprobs)",
         request_id, p.max_tokens);
  }
  const auto check_logprobs = [&](const std::optional<int32_t>& n, const char* field) {
    if (n && (*n < 0 || *n > kMaxLogprobs)) {
      fail(ErrorCode::InvalidArgument, "request '{}': GenerationParams.{} = {} must be in [0, {}]", request_id, field,
           *n, kMaxLogprobs);
    }
  };
  check_logprobs(p.logprobs, "logprobs");
  check_logprobs(p.prompt_logprobs, "prompt_logprobs");
  if (p.n < 1 || p.n > kMaxChoices) {
    fail(ErrorCode::InvalidArgument, "request '{}': GenerationParams.n = {} must be in [1, {}]", request_id, p.n,
         kMaxChoices);
  }
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens) {
    fail(ErrorCode::InvalidArgument, "request '{}': params.min_tokens = {} must be in [0, max_tokens = {}]", request_id,
         p.min_tokens, p.max_tokens);
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

void validate_sampling_without_penalty(const SamplingParams& params, const std::string& field) {
  validate_sampling(params, field);
  if (params.repetition_penalty && *params.repetition_penalty != 1.0f) {
    fail(ErrorCode::InvalidArgument, "{}.repetition_penalty = {}: this head has no repetition penalty (leave it unset)",
         field, *params.repetition_penalty);
  }
}

namespace {

void set_controls(SamplingState& s, const ResolvedSampling& r) {
  s.temperature = r.temperature;
  s.top_k = r.top_k;
  s.top_p = r.top_p;
  s.repetition_penalty = r.repetition_penalty;
}

}  // namespace

SamplingState make_sampling_state(const GenerationParams& p, const SamplingParams& model_default,
                                  const std::vector<int32_t>& eos_ids) {
  SamplingState s;
  set_controls(s, resolve_sampling(p.sampling, model_default));
  s.min_tokens = p.min_tokens;
  s.logprobs = p.logprobs.value_or(-1);
  s.prompt_logprobs = p.prompt_logprobs.value_or(-1);
  s.suppressed_below_min = eos_ids;
  s.suppressed_below_min.insert(s.suppressed_below_min.end(), p.stop_token_ids.begin(), p.stop_token_ids.end());
  s.reseed(p.seed ? *p.seed : std::random_device{}());
  return s;
}

SamplingState make_codebook_sampling_state(const SamplingParams& sampling, const SamplingParams& model_default,
                                           std::optional<uint64_t> seed) {
  SamplingState s;
  set_controls(s, resolve_sampling(sampling, model_default));
  // Its own stream of random numbers: the same seed must not replay the main head's draws.
  s.reseed(seed ? *seed ^ 0x9e3779b97f4a7c15ULL : std::random_device{}());
  return s;
}

}  // namespace izwi
