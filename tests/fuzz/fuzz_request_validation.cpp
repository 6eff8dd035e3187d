// Fuzz target: requests with random prompt ids and parameters (NaN, inf, huge and negative
// values included) through validate_request with fixed limits, and speech requests through the
// sampling checks, the Qwen3-TTS fixture's speech_prompt and validate_params (what
// Engine::synthesize does before anything is queued). A request that is accepted must satisfy
// every documented rule (checked here independently); anything else must raise izwi::Error.

#include <ATen/ATen.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/request_processor.h"
#include "fuzz_support.h"
#include "izwi/errors.h"
#include "izwi/speech.h"
#include "izwi/tokenizer.h"
#include "models/model_registry.h"

namespace {

using izwi::fuzz::Bytes;

izwi::RequestLimits limits(bool has_tokenizer) {
  izwi::RequestLimits l;
  l.vocab_size = 3072;
  l.has_tokenizer = has_tokenizer;
  l.max_seq_len = 512;
  l.block_size = 16;
  l.num_kv_blocks = 24;
  return l;
}

int32_t small_or_special(Bytes& in, int32_t span) {
  const uint8_t b = in.byte();
  return b < 224 ? static_cast<int32_t>(in.range(-2, span)) : in.special_int();
}

float float_param(Bytes& in, float typical) {
  const uint8_t b = in.byte();
  if (b < 96) return typical;
  if (b < 192) return static_cast<float>(in.byte()) / 128.0f;
  return in.special_float();
}

izwi::GenerationParams random_params(Bytes& in) {
  izwi::GenerationParams p;
  p.max_tokens = small_or_special(in, 600);
  p.min_tokens = small_or_special(in, 600);
  p.ignore_eos = in.flag();
  if (in.flag()) p.sampling.temperature = float_param(in, 0.0f);
  if (in.flag()) p.sampling.top_k = small_or_special(in, 100);
  if (in.flag()) p.sampling.top_p = float_param(in, 1.0f);
  if (in.flag()) p.sampling.repetition_penalty = float_param(in, 1.0f);
  for (int n = in.byte() % 4; n > 0; --n) p.stop_token_ids.push_back(small_or_special(in, 4000));
  for (int n = in.byte() % 3; n > 0; --n) p.stop.push_back(in.string(16));
  if (in.flag()) p.seed = in.take<uint64_t>();
  return p;
}

// The documented rules of sampling, restated: each set value in range.
bool sampling_ok(const izwi::SamplingParams& s) {
  return (!s.temperature || (std::isfinite(*s.temperature) && *s.temperature >= 0)) && (!s.top_k || *s.top_k >= 0) &&
         (!s.top_p || (*s.top_p > 0 && *s.top_p <= 1)) &&
         (!s.repetition_penalty || (std::isfinite(*s.repetition_penalty) && *s.repetition_penalty > 0));
}

// The documented rules, restated: an accepted request must satisfy all of them.
void check_accepted(const izwi::GenerationParams& p, int64_t prompt_len, const izwi::RequestLimits& l) {
  const bool ok = p.max_tokens >= 1 && p.min_tokens >= 0 && p.min_tokens <= p.max_tokens && sampling_ok(p.sampling) &&
                  prompt_len + p.max_tokens <= l.max_seq_len &&
                  (prompt_len + p.max_tokens + l.block_size - 1) / l.block_size <= l.num_kv_blocks &&
                  (p.stop.empty() || l.has_tokenizer);
  if (!ok) std::abort();
  for (int32_t id : p.stop_token_ids) {
    if (id < 0 || id >= l.vocab_size) std::abort();
  }
  for (const std::string& s : p.stop) {
    if (s.empty()) std::abort();
  }
}

void fuzz_text_request(Bytes& in) {
  izwi::Request r;
  r.id = in.flag() ? in.string(8) : "";
  const int n = small_or_special(in, 600);
  for (int i = 0; i < n && i < 1024 && in.remaining() > 0; ++i) r.prompt_ids.push_back(small_or_special(in, 3100));
  r.params = random_params(in);
  const izwi::RequestLimits l = limits(in.flag());
  try {
    izwi::validate_request(r, l);
  } catch (const izwi::Error&) {
    return;
  }
  if (r.prompt_ids.empty()) std::abort();
  for (int32_t id : r.prompt_ids) {
    if (id < 0 || id >= l.vocab_size) std::abort();
  }
  check_accepted(r.params, static_cast<int64_t>(r.prompt_ids.size()), l);
  (void)izwi::make_sampling_state(r.params, {}, {0, 1});
}

struct Tts {
  std::unique_ptr<izwi::CausalLM> model;
  izwi::Tokenizer tokenizer;
};

const Tts& tts() {
  static const Tts instance{izwi::load_causal_lm(std::string(IZWI_TEST_DATA_DIR) + "/qwen3-tts-tiny",
                                                 std::make_shared<const izwi::Backend>(izwi::Backend::host())),
                            izwi::Tokenizer::from_dir(std::string(IZWI_TEST_DATA_DIR) + "/tokenizer-qwen2-style")};
  return instance;
}

void fuzz_speech_request(Bytes& in) {
  static const char* const kSpeakers[] = {"", "alice", "Bob", "carol"};
  static const char* const kLanguages[] = {"auto", "english", "Chinese", ""};
  izwi::SpeechRequest r;
  const uint8_t how = in.byte();
  if (how & 1) r.text = in.string(64);
  if (how & 2) {
    for (int n = in.byte() % 24; n > 0; --n) r.text_ids.push_back(small_or_special(in, 620));
  }
  if (how & 4) r.instruct = in.string(32);
  if (how & 8) {
    for (int n = in.byte() % 8; n > 0; --n) r.instruct_ids.push_back(small_or_special(in, 620));
  }
  const uint8_t s = in.byte();
  r.speaker = s < 192 ? kSpeakers[s % 4] : in.string(8);
  const uint8_t g = in.byte();
  r.language = g < 192 ? kLanguages[g % 4] : in.string(8);
  r.text_mode = static_cast<izwi::SpeechTextMode>(in.byte() % 3);
  izwi::SpeechParams& p = r.params;
  p.max_frames = small_or_special(in, 600);
  p.min_frames = small_or_special(in, 600);
  if (in.flag()) p.sampling.temperature = float_param(in, 0.9f);
  if (in.flag()) p.sampling.top_k = small_or_special(in, 100);
  if (in.flag()) p.sampling.top_p = float_param(in, 1.0f);
  if (in.flag()) p.sampling.repetition_penalty = float_param(in, 1.05f);
  if (in.flag()) p.codebook_sampling.temperature = float_param(in, 0.9f);
  if (in.flag()) p.codebook_sampling.top_k = small_or_special(in, 100);
  if (in.flag()) p.codebook_sampling.top_p = float_param(in, 1.0f);
  if (in.flag()) p.seed = in.take<uint64_t>();
  const izwi::RequestLimits l = limits(true);
  const izwi::Tokenizer* tokenizer = (how & 16) ? &tts().tokenizer : nullptr;
  try {
    // As the engine's speech path: both heads' sampling, then the model's prompt and the length.
    izwi::validate_sampling(p.sampling, "SpeechParams.sampling");
    izwi::validate_sampling_without_penalty(p.codebook_sampling, "SpeechParams.codebook_sampling");
    izwi::SpeechPrompt prompt = tts().model->capabilities().speech->speech_prompt(r, tokenizer);
    if (prompt.keys.empty() || !prompt.state || prompt.codebook_sampling == nullptr) std::abort();
    if (!sampling_ok(p.codebook_sampling)) std::abort();
    prompt.params.sampling = p.sampling;
    izwi::validate_params("fuzz", prompt.params, static_cast<int32_t>(prompt.keys.size()), l);
    check_accepted(prompt.params, static_cast<int64_t>(prompt.keys.size()), l);
  } catch (const izwi::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  if (in.byte() & 1) {
    fuzz_speech_request(in);
  } else {
    fuzz_text_request(in);
  }
  return 0;
}
